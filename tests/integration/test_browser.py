"""The web page in a real browser: `rnnsearch serve` in a subprocess, driven by headless Chromium.

Debian's Chromium (/usr/bin/chromium, which `make test` installs) is driven with
Playwright, whose own browser downloads are never used. Without Chromium the tests skip,
except under CI (CI=true), where a missing browser is a failure.
"""

from __future__ import annotations

import base64
import json
import os
import re
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from PIL import Image
from playwright.sync_api import Page, expect, sync_playwright

from rnnsearch.server.child_process import served
from rnnsearch.speech.digits import make_utterances
from tests.integration.conftest import write_wav

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Without the background-networking flags Chromium keeps trying to reach outside services."""

SENTENCE = "Ein Hund läuft durch den Schnee."
HIGHLIGHT = re.compile(r"\bhighlight\b")
SELECTED = re.compile(r"\bselected\b")
ERROR = re.compile(r"\berror\b")
TIMEOUT_MS = 60_000
VIEWPORT = {"width": 1200, "height": 900}


def chromium_or_skip() -> Path:
    """Chromium's path; a skip without it, or a failure under CI, where `make test` should have installed it."""
    if CHROMIUM.is_file():
        return CHROMIUM
    reason = f"no Chromium at {CHROMIUM}: install it with `apt-get install chromium` (`make test` does)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def server_url(model_dir, tmp_path_factory) -> Iterator[str]:
    """The address of `rnnsearch serve MODEL --port 0` on loopback; stopped afterwards, whatever happens."""
    with served(model_dir, tmp_path_factory.mktemp("server") / "server.log") as url:
        yield url


@contextmanager
def chromium_page(profile: Path) -> Iterator[Page]:
    """A page in headless Chromium with a fresh profile in `profile`, closed afterwards.

    Called in the test itself rather than in a fixture, so that a missing browser under
    CI is reported as the test's failure and not as an error in its setup.
    """
    chromium = chromium_or_skip()
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=chromium, headless=True, args=CHROMIUM_FLAGS, viewport=VIEWPORT
        )
        context.set_default_timeout(TIMEOUT_MS)
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


def open_page(page: Page, url: str) -> None:
    """Load the page at `url` and wait until it has read the model description (and so set the model's beam size)."""
    page.goto(url)
    expect(page.locator("#model-info")).to_contain_text("de → en")


def translate_by_api(url: str, texts: list[str], beam_size: int, n_best: int) -> list[dict]:
    body = json.dumps({"texts": texts, "beam_size": beam_size, "n_best": n_best}).encode()
    request = urllib.request.Request(url + "v1/translate", body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.load(response)["translations"]


def heatmap_cells(page: Page) -> dict[tuple[int, int], float]:
    """The drawn cells: (target index, source index) → weight."""
    cells = page.eval_on_selector_all(
        "#heatmap svg.alignment rect.cell", "cells => cells.map(c => [+c.dataset.t, +c.dataset.s, +c.dataset.weight])"
    )
    return {(t, s): weight for t, s, weight in cells}


def highlighted(page: Page, selector: str, attribute: str) -> set[int]:
    """The `attribute` values (data-t or data-s) of the heatmap's highlighted elements matching `selector`."""
    return {int(node.get_attribute(attribute)) for node in page.locator(f"#heatmap {selector}.highlight").all()}


def test_the_page_translates_and_draws_the_alignment_the_api_gives(server_url, tmp_path):
    with chromium_page(tmp_path / "profile") as page:
        check_translation_and_heatmap(page, server_url, tmp_path / "page.png")


def check_translation_and_heatmap(page: Page, url: str, screenshot: Path) -> None:
    """Translate SENTENCE on the page, compare what it draws with the API's answer, point at the
    heatmap and take a screenshot."""
    open_page(page, url)
    page.locator("#source").press_sequentially(SENTENCE)
    page.locator("#translate-button").click()
    expect(page.locator("#heatmap svg.alignment rect.cell").first).to_be_attached()
    expect(page.locator("#status")).not_to_have_class(ERROR)

    beam_size, n_best = int(page.input_value("#beam-size")), int(page.input_value("#n-best"))
    [answer] = translate_by_api(url, [SENTENCE], beam_size, n_best)
    targets = page.locator("#heatmap text.target-label").all_text_contents()
    sources = page.locator("#heatmap text.source-label").all_text_contents()
    cells = heatmap_cells(page)
    assert len(cells) == len(targets) * len(sources) == len(answer["target_tokens"]) * len(answer["source_tokens"])
    assert (targets, sources) == (answer["target_tokens"], answer["source_tokens"])
    for (t, s), weight in cells.items():
        assert weight == pytest.approx(answer["alignment"][t][s], abs=1e-6)
    expect(page.locator("ol#results > li.result")).to_have_count(1)
    expect(page.locator("li.result .translation")).to_have_text(answer["text"])
    expect(page.locator("li.result .source")).to_have_text(SENTENCE)
    expect(page.locator("ol#nbest > li.hypothesis")).to_have_count(n_best)

    row = len(targets) // 2
    label = page.locator(f'#heatmap text.target-label[data-t="{row}"]')
    label.hover()
    expect(label).to_have_class(HIGHLIGHT)
    strongest = max(range(len(sources)), key=lambda s: answer["alignment"][row][s])
    lit_cells = highlighted(page, "rect.cell", "data-s")
    assert strongest in lit_cells
    assert highlighted(page, "rect.cell", "data-t") == {row}
    assert highlighted(page, "text.target-label", "data-t") == {row}
    assert highlighted(page, "text.source-label", "data-s") == lit_cells

    other = (row + 1) % len(targets)
    page.locator(f'#heatmap rect.cell[data-t="{other}"][data-s="0"]').hover()
    expect(page.locator(f'#heatmap text.target-label[data-t="{other}"]')).to_have_class(HIGHLIGHT)
    assert highlighted(page, "rect.cell", "data-t") == {other}
    assert highlighted(page, "text.target-label", "data-t") == {other}

    page.screenshot(path=screenshot, full_page=True)
    assert_real_picture(screenshot)


def assert_real_picture(path: Path) -> None:
    """A PNG of a page-sized picture with more in it than a few flat colours."""
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with Image.open(path) as picture:
        assert picture.width >= 800 and picture.height >= 400
        assert len(picture.convert("L").getcolors()) > 16


def watch_button_disabled(page: Page) -> None:
    """Have the page note in window.buttonWasDisabled whether the translate button gets disabled:
    it is only for the time of the request, too short to catch by polling from outside."""
    page.evaluate(
        """() => {
            const button = document.getElementById("translate-button");
            window.buttonWasDisabled = false;
            new MutationObserver(() => { window.buttonWasDisabled ||= button.disabled; })
                .observe(button, { attributes: true, attributeFilter: ["disabled"] });
        }"""
    )


def test_ctrl_enter_translates_every_line_and_a_line_can_be_selected(server_url, tmp_path):
    with chromium_page(tmp_path / "profile") as page:
        open_page(page, server_url)
        watch_button_disabled(page)
        source = page.locator("#source")
        source.fill("Eine Frau singt.\nZwei Männer spielen Fußball.")
        source.press("Control+Enter")
        results = page.locator("ol#results > li.result")
        expect(results).to_have_count(2)
        expect(page.locator("#translate-button")).to_be_enabled()
        assert page.evaluate("window.buttonWasDisabled"), "the button stayed enabled during the request"
        results.nth(1).click()
        expect(results.nth(1)).to_have_class(SELECTED)
        expect(page.locator("ol#nbest > li.hypothesis[data-index='1']")).to_have_count(1)
        sources = page.locator("#heatmap text.source-label").all_text_contents()
        [answer] = translate_by_api(
            server_url, ["Zwei Männer spielen Fußball."], int(page.input_value("#beam-size")), 1
        )
        assert sources == answer["source_tokens"]


def test_the_glossary_box_writes_its_terms_and_names_a_line_it_cannot_read(server_url, tmp_path):
    with chromium_page(tmp_path / "profile") as page:
        open_page(page, server_url)
        page.locator("#glossary-box summary").click()
        page.locator("#glossary").fill("Hund = puppy\n\nFrau = Frau")
        page.locator("#source").fill("Ein Hund läuft.\nEine Frau singt.")
        page.locator("#translate-button").click()
        results = page.locator("ol#results > li.result .translation")
        expect(results).to_have_count(2)
        assert "puppy" in re.findall(r"\w+", results.nth(0).inner_text())
        assert "Frau" in re.findall(r"\w+", results.nth(1).inner_text())
        page.locator("#glossary").fill("Hund = puppy\nKatze")
        page.locator("#translate-button").click()
        expect(page.locator("#status")).to_have_class(ERROR)
        expect(page.locator("#status")).to_contain_text("Glossary line 2")
        page.locator("#glossary").fill("Hund = puppy\nHund = dog")
        page.locator("#translate-button").click()
        expect(page.locator("#status")).to_contain_text('Glossary line 2: "Hund" has the target "puppy" on line 1')


HOSTILE = (
    '<img src=x onerror="window.pwned = 1"><script>window.pwned = 2</script> '
    'Ein <b onclick="window.pwned = 3">Hund</b> <a href="javascript:window.pwned = 4">läuft</a> '
    '<svg onload="window.pwned = 5"></svg>.'
)


def test_marked_up_translations_are_shown_as_text_and_nothing_in_them_runs(server_url, tmp_path):
    """A translation with markup carries the input's own tags, hostile ones included: the
    page shows them as text, so no element of theirs exists and no handler of theirs runs."""
    with chromium_page(tmp_path / "profile") as page:
        open_page(page, server_url)
        page.select_option("#markup", "html")
        page.locator("#source").fill(HOSTILE)
        page.locator("#translate-button").click()
        expect(page.locator("ol#results > li.result")).to_have_count(1)
        expect(page.locator("#status")).not_to_have_class(ERROR)
        body = json.dumps({"texts": [HOSTILE], "beam_size": int(page.input_value("#beam-size")), "markup": "html"})
        request = urllib.request.Request(
            server_url + "v1/translate", body.encode(), {"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            [answer] = json.load(response)["translations"]
        assert "onerror" in answer["marked_up"] and "<script>" in answer["marked_up"]
        expect(page.locator("li.result .translation")).to_have_text(answer["marked_up"])
        expect(page.locator("ol#nbest .text").first).to_have_text(answer["marked_up"])
        for selector in ("img", "script", "svg", "a", "b"):
            expect(page.locator(f"#results {selector}, #nbest {selector}")).to_have_count(0)
        page.locator("li.result .translation").click()
        assert page.evaluate("window.pwned") is None


@pytest.fixture(scope="module")
def speech_server_url(speech_model, tmp_path_factory) -> Iterator[str]:
    """`rnnsearch serve` for the tiny speech model, as `server_url` is for the text model."""
    with served(speech_model, tmp_path_factory.mktemp("speech-server") / "server.log") as url:
        yield url


def test_a_speech_model_takes_a_wav_file_and_draws_its_waveform_over_the_heatmap(speech_server_url, tmp_path):
    utterance = make_utterances("customary", "test", 1, seed=11, max_digits=3)[0]
    wav = write_wav(tmp_path / "digits.wav", utterance.samples)
    with chromium_page(tmp_path / "profile") as page:
        page.goto(speech_server_url)
        expect(page.locator("#model-info")).to_contain_text("audio → digits")
        expect(page.locator("#source")).to_be_hidden()
        page.locator("#audio-files").set_input_files(str(wav))
        page.locator("#translate-button").click()
        expect(page.locator("#heatmap svg.alignment path.waveform")).to_be_attached(timeout=TIMEOUT_MS)
        expect(page.locator("#status")).not_to_have_class(ERROR)
        expect(page.locator("li.result .source")).to_have_text("digits.wav")

        body = json.dumps({"audio": [base64.b64encode(wav.read_bytes()).decode()], "beam_size": 5}).encode()
        request = urllib.request.Request(speech_server_url + "v1/translate", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            [answer] = json.load(response)["translations"]
        sources = page.locator("#heatmap text.source-label").all_text_contents()
        assert sources == answer["source_tokens"]
        assert len(heatmap_cells(page)) == len(answer["target_tokens"]) * len(sources)
        assert page.locator("#heatmap rect.wave-column").count() == len(sources)
        assert page.get_attribute("#heatmap path.waveform", "d").count("M") > len(sources)

        column = page.locator('#heatmap rect.wave-column[data-s="2"]')
        cell_box = page.locator('#heatmap rect.cell[data-t="0"][data-s="2"]').bounding_box()
        column_box = column.bounding_box()
        assert abs(column_box["x"] - cell_box["x"]) < 1 and column_box["y"] < cell_box["y"]
        column.hover()
        expect(column).to_have_class(HIGHLIGHT)
        expect(page.locator('#heatmap text.source-label[data-s="2"]')).to_have_class(HIGHLIGHT)


def test_the_api_docs_page_works_without_any_network_but_the_server(server_url, tmp_path):
    """Swagger UI at /docs loads every file from the server itself: with all other hosts
    blocked it still lists the API's operations."""
    outside: list[str] = []

    def loopback_only(route):
        url = route.request.url
        if url.startswith(server_url):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    with chromium_page(tmp_path / "profile") as page:
        page.route("**/*", loopback_only)
        page.goto(server_url + "docs")
        expect(page.locator(".opblock-summary-path", has_text="/v1/translate")).to_be_visible()
        expect(page.locator(".opblock-summary-path", has_text="/v1/model")).to_be_visible()
    assert outside == []


def test_a_document_picked_on_the_page_comes_back_translated_for_download(server_url, tmp_path):
    """The page sends a chosen file to /v1/documents, with the glossary box's terms, and
    offers its translation under the same name: the page's tree and its protected parts
    as the file had them, the terms written."""
    from tests.unit.test_documents import HTML, _blocks

    source = tmp_path / "seite.html"
    source.write_text(HTML, encoding="utf-8")
    with chromium_page(tmp_path / "profile") as page:
        open_page(page, server_url)
        page.locator("#glossary-box summary").click()
        page.locator("#glossary").fill("Mann = puppy")
        page.set_input_files("#document-file", str(source))
        page.locator("#document-button").click()
        expect(page.locator("#document-download")).to_be_visible()
        expect(page.locator("#status")).to_contain_text("seite.html: 11 units (5 attributes)")
        with page.expect_download() as download:
            page.locator("#document-download").click()
        assert download.value.suggested_filename == "seite.html"
        translated = Path(download.value.path()).read_text(encoding="utf-8")
    assert _blocks(translated) == _blocks(HTML) and "<pre>  kein   Text\n  hier </pre>" in translated
    assert translated != HTML and "puppy" in translated


def test_chromium_reads_every_translated_page_with_the_same_elements_and_links(tmp_path):
    """Each test page and real page, translated, loads in the browser with the element
    tree, the scripts and the links the source has."""
    from tests.unit.test_documents import DOCUMENTS, REAL, translated

    pages = {name: data for name, data in DOCUMENTS.items() if name.endswith(".html")}
    pages.update({path.name: path.read_bytes() for path in sorted(REAL.glob("*.html"))})
    shape = (
        "() => [[...document.querySelectorAll('*')].map(e => e.tagName),"
        " [...document.links].map(a => a.getAttribute('href'))]"
    )
    with chromium_page(tmp_path / "profile") as page:
        for name, data in pages.items():
            (tmp_path / f"source-{name}").write_bytes(data)
            (tmp_path / f"translated-{name}").write_bytes(translated(name, data))
            shapes = []
            for kind in ("source", "translated"):
                page.goto((tmp_path / f"{kind}-{name}").as_uri())
                shapes.append(page.evaluate(shape))
            assert shapes[0] == shapes[1], name


def test_chromium_loads_translated_captions_as_a_track_with_every_cue(tmp_path):
    """A translated WebVTT file is one a browser plays: loaded as a `<track>`, it has the
    source's cues, at the source's times, each with its translated text."""
    from tests.unit.test_documents import CAPTIONS, translated

    files = {
        "film.vtt": (translated("film.vtt", CAPTIONS.encode()), "text/vtt"),
        "index.html": (
            b'<video controls><track kind="subtitles" src="film.vtt" srclang="en" default></video>',
            "text/html",
        ),
    }

    def serve(route):
        body, kind = files[route.request.url.rsplit("/", 1)[-1]]
        route.fulfill(status=200, body=body, content_type=kind)

    read = (
        "() => new Promise(done => { const track = document.querySelector('track');"
        " const answer = () => done([...track.track.cues].map(c => [c.startTime, c.endTime, c.text]));"
        " if (track.readyState === 2) answer(); else track.addEventListener('load', answer); })"
    )
    with chromium_page(tmp_path / "profile") as page:
        page.route("http://captions.test/**", serve)
        page.goto("http://captions.test/index.html")
        cues = page.evaluate(read)
    assert [(start, end) for start, end, _ in cues] == [(1.0, 4.0), (4.0, 6.0), (6.0, 7.0)]
    assert all(text.strip() for _, _, text in cues) and cues[2][2] == "<v.laut Mary>HALLO!"
