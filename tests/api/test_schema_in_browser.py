"""``/api/schema/`` opens in a browser (shown as text) and negotiates as before for API clients."""

import pytest

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8"


@pytest.mark.django_db
def test_it_shows_the_schema_to_a_browser_as_plain_text(client):
    response = client.get("/api/schema/", headers={"accept": BROWSER_ACCEPT})

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain")
    assert response["Content-Disposition"].startswith("inline")
    assert response.content.startswith(b"openapi: 3")


@pytest.mark.django_db
def test_it_gives_an_api_client_the_openapi_yaml_type(client):
    response = client.get("/api/schema/", headers={"accept": "*/*"})

    assert response["Content-Type"].startswith("application/vnd.oai.openapi")


@pytest.mark.django_db
def test_it_gives_a_browser_asking_for_json_the_json(client):
    response = client.get("/api/schema/", {"format": "json"}, headers={"accept": BROWSER_ACCEPT})

    assert response.json()["info"]["title"] == "capacityweb API"


@pytest.mark.django_db
def test_it_serves_the_json_inline_not_as_a_download(client):
    """``?format=json`` in a browser: a JSON type and ``inline`` (drf-spectacular's
    SpectacularAPIView sets the disposition), so the browser shows it rather than saving."""
    response = client.get("/api/schema/", {"format": "json"}, headers={"accept": BROWSER_ACCEPT})

    assert response.status_code == 200
    assert response["Content-Type"].split(";")[0].endswith("json")
    assert response["Content-Disposition"].startswith("inline")
