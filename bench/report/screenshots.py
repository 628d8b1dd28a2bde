"""Before/after screenshots of the HTML diagnosis report: one saved diagnosis (JSON) rendered by
two checkouts of ladder, photographed by a headless Chromium.

Rendering one JSON twice keeps the kernel, the machine and the measurements fixed, so the
pictures differ only by the report code. Per report it writes NAME-{before,after}.html, the top
of each page (NAME-{before,after}.png: verdict, rungs, profile, first findings) and the IR facts
section alone (NAME-facts-{before,after}.png: the table that used to overflow the page; not kept
when it looks exactly like an earlier report's), the PNGs reduced to a 256-colour palette so that each stays well under 300 KB.

    python bench/report/screenshots.py --before /path/to/old/checkout --after . \\
        --out bench/results/report-screenshots bench/results/report-screenshots/*.json
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

RENDER = ("import json, sys; from diagnoser import report; "
          "open(sys.argv[2], 'w').write(report.render(json.load(open(sys.argv[1])), 'html'))")
WIDTH, TOP, FACTS = 1280, 2400, 1400
FACTS_HEADING = "<h2>IR facts"


def render(checkout: Path, report: Path, page: Path) -> None:
    """The report as that checkout's code renders it (run from its root, so its packages import)."""
    subprocess.run([sys.executable, "-c", RENDER, str(report.resolve()), str(page.resolve())], cwd=checkout,
                   check=True, timeout=300)


def facts_only(page: Path, into: Path) -> bool:
    """The page's head (its styles) and everything from the IR facts heading on; False if it has none."""
    html = page.read_text()
    body, start = html.find("<body>"), html.find(FACTS_HEADING)
    if body < 0 or start < 0:
        return False
    into.write_text(html[:body + len("<body>")] + html[start:])
    return True


def shoot(page: Path, png: Path, height: int, chromium: str) -> None:
    subprocess.run([chromium, "--headless", "--no-sandbox", "--hide-scrollbars", f"--screenshot={png.resolve()}",
                    f"--window-size={WIDTH},{height}", page.resolve().as_uri()], check=True, timeout=120,
                   capture_output=True)
    from PIL import Image

    # Octree keeps the plots' few saturated colours; median cut merged the green and red into greys.
    Image.open(png).convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE).save(png, optimize=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout whose report code is 'before'")
    parser.add_argument("--after", type=Path, required=True, help="checkout whose report code is 'after'")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--chromium", default="chromium")
    parser.add_argument("reports", type=Path, nargs="+", help="saved `ladder diagnose --json` reports")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    shot: dict[bytes, str] = {}  # a facts picture -> the PNG that already holds it
    with tempfile.TemporaryDirectory() as scratch:
        for report in args.reports:
            for side, checkout in (("before", args.before), ("after", args.after)):
                page = args.out / f"{report.stem}-{side}.html"
                render(checkout, report, page)
                shoot(page, args.out / f"{report.stem}-{side}.png", TOP, args.chromium)
                facts = Path(scratch) / page.name
                png = args.out / f"{report.stem}-facts-{side}.png"
                if facts_only(page, facts):
                    shoot(facts, png, FACTS, args.chromium)
                    if png.read_bytes() in shot:
                        print(f"{report.stem} {side}: facts look as in {shot[png.read_bytes()]}")
                        png.unlink()
                    else:
                        shot[png.read_bytes()] = png.name
                print(f"{report.stem} {side}: {page}")


if __name__ == "__main__":
    main()
