"""The digest follows the visibility policy (capacityweb.visibility, issue 28 item 3).

The fixture period (test_digest.py's docstring): r1 (team-a) 48 GPU-h idle, $120;
r2 (team-b) 36 GPU-h, $36. A subscriber on team-b only, subscribed to the whole
cluster: every idle GPU-hour counts (84.0), but r1 is not named and its $ not told:
the idle cost is r2's $36.00 and the top list is r2 alone. Through the real SMTP server.
"""

import pytest
from digest_period import PERIOD_START, make_period, text_and_html

from reservations import digest

pytestmark = pytest.mark.django_db


def test_it_neither_names_nor_prices_another_teams_reservation(smtp_server):
    from django.contrib.auth.models import Group

    from capacityweb.teams import team_group_name

    period = make_period()
    period.user.groups.remove(Group.objects.get(name=team_group_name("team-a")))  # team-b only

    outcome = digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)
    assert outcome.status == "sent", outcome
    [message] = smtp_server.messages
    text, html = text_and_html(message)

    assert "Idle reserved GPU-hours: 84.0" in text
    assert "Idle reserved cost: $36.00" in text
    assert "1. prod-gpu/r2 (team-b): 36.0 GPU-h, $36.00" in text
    assert "r1" not in text and "prod-gpu/r1" not in html and "$120.00" not in text
