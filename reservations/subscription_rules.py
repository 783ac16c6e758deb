"""What a digest subscription may hold, checked wherever one is saved (API and admin form).

Recipients are real email addresses, at most DIGEST_MAX_RECIPIENTS of them: a
subscription must not turn the mail relay into a bulk sender for any signed-in
user. A webhook URL must reach a public address (``webhook_guard``): its host is
resolved now, and an internal address is refused naming the rule.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import validate_email

from reservations import digest, webhook_guard


def clean_recipients(text: str) -> str:
    """The addresses of ``text``, one a line; ValidationError naming the bad one."""
    addresses = digest.parse_recipients(text)
    if not addresses:
        raise ValidationError("at least one email address")
    limit = settings.DIGEST_MAX_RECIPIENTS
    if len(addresses) > limit:
        raise ValidationError(
            f"{len(addresses)} addresses: at most {limit} (DIGEST_MAX_RECIPIENTS)"
        )
    for address in addresses:
        try:
            validate_email(address)
        except ValidationError as error:
            raise ValidationError(f"{address}: not an email address") from error
    return "\n".join(addresses)


def clean_webhook_url(url: str) -> str:
    """``url`` when its host resolves to public (or allowed) addresses only."""
    if not url:
        return url
    try:
        webhook_guard.checked_addresses(url)
    except webhook_guard.UnsafeWebhookURL as error:
        raise ValidationError(str(error)) from None
    return url
