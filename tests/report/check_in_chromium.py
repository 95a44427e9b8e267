#!/usr/bin/env python3
"""`touchstone report`'s page as a browser shows it (ctest -L report): headless Chromium loads the page
from the checked-in runs and every picture must load (complete, with a width). A copy of the page with
one picture removed must be caught, so the check itself is seen to fail when it should.

Exit 77 (a ctest skip) only when Chromium is not installed (Debian's `chromium`; CI installs it).

  check_in_chromium.py [--screenshot FILE]   also save a screenshot of the page (docs/figures/)
"""
import argparse
import html
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.normpath(os.path.join(HERE, "..", ".."))
DATA = os.path.join(SOURCE, "tests", "data", "report")
RUNS = [os.path.join(DATA, "plain-2596mhz.json"), os.path.join(DATA, "record-2445mhz.json")]
CLI = os.environ.get("TOUCHSTONE_CLI", os.path.join(SOURCE, "build", "cli", "touchstone"))

# Appended to a copy of the page: after the load event, one line saying how many pictures loaded.
PROBE = """<script>
window.addEventListener("load", () => {
  const imgs = Array.from(document.images);
  const broken = imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute("src"));
  const p = document.createElement("pre");
  p.id = "img-check";
  p.textContent = "images=" + imgs.length + " broken=" + broken.length + " " + broken.join(",");
  document.body.appendChild(p);
});
</script>"""


def chromium_args(profile):
    return ["--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars", f"--user-data-dir={profile}"]


def images_in_chromium(chromium, page, profile):
    """(images, broken srcs) as Chromium saw them on `page` (a copy with the probe is written beside it)."""
    probe = os.path.join(os.path.dirname(page), "probe.html")
    with open(page, encoding="utf-8") as f:
        text = f.read()
    with open(probe, "w", encoding="utf-8") as f:
        f.write(text.replace("</body>", PROBE + "</body>"))
    # The virtual time budget lets the load event fire (and the probe run) before the DOM is dumped.
    proc = subprocess.run([chromium, *chromium_args(profile), "--virtual-time-budget=20000", "--dump-dom",
                           "file://" + probe], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    m = re.search(r'<pre id="img-check">images=(\d+) broken=(\d+) ?([^<]*)</pre>', proc.stdout)
    if not m:
        sys.exit(f"FAIL: Chromium printed no image check for {page} (exit {proc.returncode}): {proc.stderr[-400:]}")
    broken = [html.unescape(s) for s in m.group(3).split(",") if s]
    assert len(broken) == int(m.group(2))
    return int(m.group(1)), broken


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--screenshot", help="also save a screenshot of the page here")
    args = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIP: chromium is not installed (Debian: apt-get install chromium)")
        return 77
    with tempfile.TemporaryDirectory(prefix="touchstone-report-chromium.") as tmp:
        out = os.path.join(tmp, "page")
        proc = subprocess.run([CLI, "report", *RUNS, "-o", out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            sys.exit(f"FAIL: touchstone report exited {proc.returncode}: {proc.stderr.strip()}")
        pictures = sorted(f for f in os.listdir(out) if f.endswith(".png"))
        profile = os.path.join(tmp, "profile")

        count, broken = images_in_chromium(chromium, os.path.join(out, "index.html"), profile)
        print(f"page: {count} images, {len(broken)} broken {broken}; {len(pictures)} PNG files")
        if count != len(pictures) or broken or count == 0:
            sys.exit("FAIL: every picture of the page must load in Chromium")

        # The control: the same page with one picture gone must be reported broken.
        gone = os.path.join(tmp, "gone")
        shutil.copytree(out, gone)
        os.remove(os.path.join(gone, pictures[0]))
        count, broken = images_in_chromium(chromium, os.path.join(gone, "index.html"), profile)
        print(f"control without {pictures[0]}: {count} images, broken {broken}")
        if broken != [pictures[0]]:
            sys.exit("FAIL: the check did not see the missing picture")

        if args.screenshot:
            subprocess.run([chromium, *chromium_args(profile), f"--screenshot={os.path.abspath(args.screenshot)}",
                            "--window-size=1400,3900", "file://" + os.path.join(out, "index.html")],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300, check=True)
            print(f"screenshot: {args.screenshot}")
    print("ok: every picture loads in Chromium")
    return 0


if __name__ == "__main__":
    sys.exit(main())
