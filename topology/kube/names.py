"""Kubernetes name rules, as the API server applies them. Pure.

From apimachinery (k8s.io/apimachinery/pkg/util/validation/validation.go):
``dns1123_label_problem`` is ``IsDNS1123Label`` (at most 63 characters of
``[a-z0-9]([-a-z0-9]*[a-z0-9])?``), what a namespace name must be
(``ValidateNamespaceName`` = ``NameIsDNSLabel``); ``dns1123_subdomain_problem`` is
``IsDNS1123Subdomain`` (at most 253 characters, labels joined by dots), what most
objects' ``metadata.name`` must be (``NameIsDNSSubdomain``). A value that is not
could never name such an object; it is refused instead of stored (it would also
reach CSV exports and pages as given).
"""

from __future__ import annotations

import re

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS1123_LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def dns1123_label_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 label (upstream's message), or None when it is."""
    if len(value) > DNS1123_LABEL_MAX_LENGTH:
        return f"must be no more than {DNS1123_LABEL_MAX_LENGTH} characters"
    if DNS1123_LABEL.fullmatch(value) is None:
        return DNS1123_LABEL_MESSAGE
    return None


DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1123_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
DNS1123_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def dns1123_subdomain_problem(value: str) -> str | None:
    """Why ``value`` is not a DNS-1123 subdomain (upstream's message), or None when it is."""
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        return f"must be no more than {DNS1123_SUBDOMAIN_MAX_LENGTH} characters"
    if DNS1123_SUBDOMAIN.fullmatch(value) is None:
        return DNS1123_SUBDOMAIN_MESSAGE
    return None
