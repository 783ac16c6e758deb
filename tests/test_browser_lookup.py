"""Which Chromium capacityweb.browser picks: CHROMIUM_PATH, the system's, Playwright's."""

from pathlib import Path

from capacityweb import browser


def executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_it_takes_chromium_path_before_any_other(tmp_path, monkeypatch):
    chosen = executable(tmp_path / "my-chromium")
    monkeypatch.setenv("CHROMIUM_PATH", str(chosen))

    assert browser.chromium_path() == str(chosen)


def test_it_refuses_a_chromium_path_that_is_not_there_and_says_how_to_install(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("CHROMIUM_PATH", str(tmp_path / "missing"))

    message = browser.missing_chromium_message()
    assert browser.chromium_path() is None
    assert message.startswith(f"CHROMIUM_PATH={tmp_path / 'missing'} is not an executable file")
    for hint in ("apt-get install chromium", "brew install --cask chromium"):
        assert hint in message
    assert "playwright install chromium" in message


def test_it_finds_the_newest_chromium_playwright_downloaded(tmp_path, monkeypatch):
    monkeypatch.setenv("PLAYWRIGHT_BROWSERS_PATH", str(tmp_path))
    executable(tmp_path / "chromium-1100" / "chrome-linux" / "chrome")
    newest = executable(tmp_path / "chromium-1200" / "chrome-linux64" / "chrome")
    executable(tmp_path / "chromium_headless_shell-1300" / "chrome-linux" / "headless_shell")

    assert browser._playwright_chromium() == str(newest)
