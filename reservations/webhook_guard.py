"""Where a digest webhook may post: public addresses only, checked when the URL is saved
and again, after DNS resolution, at every send (server-side request forgery).

::

    webhook_url ──► resolve host (getaddrinfo, every address)
                        │ any address internal and outside WEBHOOK_ALLOWED_NETWORKS?
                        ├── yes ─► UnsafeWebhookURL naming the address and the rule
                        ▼
                    the checked addresses ──► send: connect to the first one itself

Any signed-in user sets a subscription's URL and the worker posts to it every
period, from inside the network: without these checks it reaches loopback
services, the cloud metadata endpoint (169.254.169.254) and private hosts.
The send connects to an address this module checked, never to the host name
again, so a name that resolves to a public address at the check and to an
internal one a moment later (DNS rebinding) gains nothing. Redirects are not
followed (``webhook.post_json`` records a 3xx as the receiver's answer).

An IPv4-mapped IPv6 address (``::ffff:127.0.0.1``) is judged as the IPv4
address it carries (Python 3.11's ``ipaddress`` calls it neither loopback nor
private). WEBHOOK_ALLOWED_NETWORKS (CIDRs, default none) admits deliberate
internal receivers, e.g. a chat bridge on the private network, or the tests'
receiver on 127.0.0.1.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# (attribute of ipaddress, what the message calls it), most specific first
INTERNAL_RULES = (
    ("is_unspecified", "an unspecified address"),
    ("is_loopback", "a loopback address"),
    ("is_link_local", "a link-local address"),
    ("is_multicast", "a multicast address"),
    ("is_reserved", "a reserved address"),
    ("is_private", "a private address"),
)
DEFAULT_PORTS = {"http": 80, "https": 443}


class UnsafeWebhookURL(ValueError):
    """A webhook URL that must not be posted to; the message names the rule."""


class UnresolvedWebhookHost(UnsafeWebhookURL):
    """The host does not resolve (now): refused when saved, retried later when sending."""


def allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(cidr, strict=False) for cidr in settings.WEBHOOK_ALLOWED_NETWORKS]


def judged_address(address: IPAddress) -> IPAddress:
    """The address whose class decides: an IPv4-mapped IPv6 address is its IPv4 one."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def internal_rule(address: IPAddress) -> str | None:
    """What makes ``address`` internal (the rule's wording), or None for a public one."""
    judged = judged_address(address)
    for attribute, wording in INTERNAL_RULES:
        if getattr(judged, attribute):
            return wording
    if not judged.is_global:  # e.g. 100.64.0.0/10, carrier-grade NAT
        return "an address that is not globally reachable"
    return None


def check_address(host: str, address: IPAddress) -> None:
    """Refuse ``address`` (one of ``host``'s) unless it is public or explicitly allowed."""
    rule = internal_rule(address)
    if rule is None:
        return
    candidates = {address, judged_address(address)}
    if any(candidate in network for network in allowed_networks() for candidate in candidates):
        return
    raise UnsafeWebhookURL(
        f"{host} resolves to {address}, {rule}; webhooks post only to public addresses "
        "(WEBHOOK_ALLOWED_NETWORKS admits internal receivers)"
    )


def host_and_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        raise UnsafeWebhookURL(f"{url!r}: not an http(s) URL with a host")
    try:
        port = parts.port or DEFAULT_PORTS[parts.scheme]
    except ValueError as error:
        raise UnsafeWebhookURL(f"{url!r}: {error}") from None
    return parts.hostname, port


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` resolves to now (an IP literal: itself), in resolver order."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as error:
        raise UnresolvedWebhookHost(f"{host} does not resolve: {error}") from None
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def checked_addresses(url: str) -> tuple[str, int, list[IPAddress]]:
    """(host, port, addresses) of ``url``, every address checked; raises UnsafeWebhookURL."""
    host, port = host_and_port(url)
    addresses = resolve(host, port)
    for address in addresses:
        check_address(host, address)
    return host, port, addresses


def connect_to_one_of(addresses: list[IPAddress], port: int, timeout: float) -> socket.socket:
    """A TCP connection to the first of ``addresses`` that answers (all of them checked)."""
    last_error: OSError = OSError("no address to connect to")
    for address in addresses:
        try:
            return socket.create_connection((str(address), port), timeout=timeout)
        except OSError as error:
            last_error = error
    raise last_error


def pinned_connection(url: str, *, timeout: float) -> http.client.HTTPConnection:
    """An HTTP(S) connection to ``url``'s host that connects only to its checked addresses.

    The Host header and, for https, the TLS server name and certificate check stay
    the URL's host name; only the address the socket connects to is pinned.
    """
    host, port, addresses = checked_addresses(url)
    secure = urlsplit(url).scheme == "https"
    connection_class = http.client.HTTPSConnection if secure else http.client.HTTPConnection
    connection = connection_class(host, port, timeout=timeout)

    def create_connection(_address: Any, timeout: float, _source: Any = None) -> socket.socket:
        return connect_to_one_of(addresses, port, timeout)

    # http.client opens its socket through this attribute (set per instance in __init__)
    connection._create_connection = create_connection  # type: ignore[attr-defined]
    return connection
