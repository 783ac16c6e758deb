"""What the digest states about time zones, missing samples and links (issue 21).

Through the real SMTP server, with the fixture period of conftest.py:
[2026-03-09 08:00, 2026-03-10 08:00) UTC.

- Times: 08:00 UTC is 17:00 in Asia/Tokyo (UTC+9, no daylight saving), so a
  Tokyo subscription due at 17:00 covers the same period, shown 17:00 to 17:00.
- Samples: with none in the period, nothing is known about the reserved GPUs.
  With one sample of r1 at 03-09 06:00 (8 reserved, 0 idle) carrying over the
  whole period, 8 GPUs x 24 h = 192.0 reserved GPU-hours were seen, none idle.
- Links: DASHBOARD_BASE_URL is what the recipient's browser opens; unset, the
  links are paths and the email says why.
"""

import pytest
from digest_period import PERIOD_START, SAMPLES, _at, make_period, text_and_html

from reservations import digest
from tests.conftest import environment_without_services, run_python

pytestmark = pytest.mark.django_db

EVERY_GPU_IN_USE = "every reserved GPU was in use"
R1_ALL_IN_USE = {"r1": [(_at(9, 6), 8, 0, 0.0)]}


def sent_digest(smtp_server, period) -> tuple[str, str, str]:
    """(subject, text, html) of the digest of the fixture period; the subject unfolded."""
    outcome = digest.send_digest(subscription_id=period.subscription.id, period_start=PERIOD_START)
    assert outcome.status == "sent", outcome
    [message] = smtp_server.messages
    return (message["Subject"].replace("\r\n", ""), *text_and_html(message))


def test_it_shows_the_period_in_the_subscribers_time_zone(smtp_server):
    period = make_period(timezone="Asia/Tokyo", hour=17)

    subject, text, html = sent_digest(smtp_server, period)

    assert "2026-03-09 17:00 to 2026-03-10 17:00 (Asia/Tokyo)" in text
    assert "2026-03-09 17:00 – 2026-03-10 17:00 (Asia/Tokyo)" in html
    assert subject.endswith("since 2026-03-09 17:00 Asia/Tokyo")
    assert "Idle reserved GPU-hours: 84.0" in text  # the same period as the UTC fixture


def test_it_labels_the_times_utc_when_the_subscription_has_no_time_zone(smtp_server):
    period = make_period(timezone="")

    subject, text, html = sent_digest(smtp_server, period)

    assert "2026-03-09 08:00 to 2026-03-10 08:00 (UTC)" in text
    assert "2026-03-09 08:00 – 2026-03-10 08:00 (UTC)" in html
    assert subject.endswith("since 2026-03-09 08:00 UTC")


def test_it_says_there_were_no_samples_instead_of_every_gpu_in_use(smtp_server):
    period = make_period(samples={})

    subject, text, html = sent_digest(smtp_server, period)

    assert EVERY_GPU_IN_USE not in text and EVERY_GPU_IN_USE not in html
    assert (
        "Idle reserved GPU-hours: not enough data yet (no samples of reserved GPUs in this period)"
    ) in text
    assert "No samples of reserved GPUs were taken in this period." in text
    assert "No samples of reserved GPUs were taken in this period." in html
    assert subject.startswith("capacityweb: no samples of reserved GPUs since ")


def test_it_says_every_gpu_was_in_use_when_samples_show_it(smtp_server):
    period = make_period(samples=R1_ALL_IN_USE)

    subject, text, html = sent_digest(smtp_server, period)

    statement = f"{EVERY_GPU_IN_USE} when sampled (192.0 reserved GPU-h sampled)"
    assert statement in text and statement in html
    assert "Idle reserved GPU-hours: 0.0" in text
    assert subject.startswith("capacityweb: $0.00 of idle reserved GPUs (0.0 GPU-h)")


def test_it_lists_idle_reservations_and_no_all_in_use_claim_when_gpus_were_idle(smtp_server):
    period = make_period(samples=SAMPLES)

    _, text, html = sent_digest(smtp_server, period)

    assert EVERY_GPU_IN_USE not in text and EVERY_GPU_IN_USE not in html
    assert "No samples of reserved GPUs" not in text


def test_it_links_to_the_configured_dashboard_base_url(smtp_server, settings):
    settings.DASHBOARD_BASE_URL = "https://gpu.example.test:9443/capacity/"
    period = make_period()

    _, text, html = sent_digest(smtp_server, period)

    base = "https://gpu.example.test:9443/capacity"
    reservations = f"{base}/clusters/{period.cluster.id}/reservations/?"
    assert f"Idle reservations: {reservations}range=custom&start=" in text
    assert f"Recommendations: {base}/clusters/{period.cluster.id}/recommendations/" in text
    assert f"Dashboard: {base}/" in text.splitlines()
    assert f'href="{reservations}' in html
    assert "not configured" not in text


def test_it_gives_paths_and_says_so_when_no_base_url_is_configured(smtp_server, settings):
    settings.DASHBOARD_BASE_URL = ""
    period = make_period()

    _, text, html = sent_digest(smtp_server, period)

    path = f"/clusters/{period.cluster.id}/reservations/?range=custom&start="
    assert f"Idle reservations: {path}" in text
    assert "http" not in text.split("Idle reservations:", 1)[1]
    note = "DASHBOARD_BASE_URL is not configured: the links are paths on the capacityweb server."
    assert note in text and note in html


def test_it_has_no_dashboard_base_url_unless_one_is_configured():
    environment = environment_without_services()
    environment.pop("DASHBOARD_BASE_URL", None)
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(repr(settings.DASHBOARD_BASE_URL))"

    result = run_python(code, environment)

    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "''"


def test_the_beat_task_logs_that_due_digests_carry_path_links(smtp_server, settings, caplog):
    from capacityweb.celery import app
    from reservations import tasks

    make_period()
    settings.DASHBOARD_BASE_URL = ""
    app.conf.task_always_eager = True
    try:
        with caplog.at_level("WARNING", logger="reservations.tasks"):
            tasks.send_due_digests()
    finally:
        app.conf.task_always_eager = False

    assert "DASHBOARD_BASE_URL is not set: links in digest emails" in caplog.text
