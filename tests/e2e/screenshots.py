"""Take full-page screenshots of app pages in both languages: ``make screenshots``.

Usage: ``python -m tests.e2e.screenshots [--out screenshots] [path?query ...]``. Without paths it
shoots every page in English and Chinese. Starts its own ``streamlit run`` on a free port.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.load.server import serve_streamlit
from lessons import PAGES
from tests.e2e.conftest import CHROMIUM_FLAGS, chromium_path, wait_for_app

DEFAULT_PATHS = [p.url_path for p in PAGES]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", nargs="*", help="url paths with optional ?query (default: all pages)")
    parser.add_argument("--out", default="screenshots")
    parser.add_argument("--langs", default="en,zh")
    parser.add_argument("--width", type=int, default=1400)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with serve_streamlit() as server:  # the app as the e2e tests serve it
        base = server.url
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
            ctx = browser.new_context(viewport={"width": args.width, "height": 1000})
            page = ctx.new_page()
            for path in args.paths or DEFAULT_PATHS:
                for lang in args.langs.split(","):
                    sep = "&" if "?" in path else "?"
                    page.goto(f"{base}/{path}{sep}lang={lang}")
                    wait_for_app(page)
                    # Streamlit scrolls inside stMain, so "full_page" alone shows only the
                    # viewport: grow the viewport to the content, then let lazy parts draw.
                    height = page.evaluate(
                        "() => Math.max(...[...document.querySelectorAll('[data-testid=stMain] *')]"
                        ".slice(0, 1).map(e => e.scrollHeight), document.body.scrollHeight)"
                    )
                    page.set_viewport_size({"width": args.width, "height": min(int(height) + 100, 16000)})
                    page.wait_for_timeout(2500)
                    name = path.replace("?", "_").replace("&", "_").replace("=", "-")
                    target = out / f"{name}.{lang}.png"
                    page.screenshot(path=str(target), full_page=True)
                    page.set_viewport_size({"width": args.width, "height": 1000})
                    print(target)
            browser.close()


if __name__ == "__main__":
    main()
