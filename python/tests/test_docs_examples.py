"""The Python examples of the documentation are tests: every ```pycon block of docs/python.md
(and of README.md and the other docs/*.md pages, should they have one) runs as a doctest, and
each printed result must equal the one written in the page. A page whose examples were
rewritten as plain ```python blocks would escape this, so those fail the test."""

import doctest
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.M | re.S)


def blocks(lang):
    for page in PAGES:
        for m in FENCE.finditer(page.read_text(encoding="utf-8")):
            if m.group(1) == lang:
                line = page.read_text(encoding="utf-8")[: m.start()].count("\n") + 2
                yield page, line, m.group(2)


def test_the_python_page_has_doctest_examples():
    assert any(p.name == "python.md" for p, _, _ in blocks("pycon"))


@pytest.mark.parametrize("page,line,text", list(blocks("pycon")),
                         ids=lambda v: v.name if isinstance(v, pathlib.Path) else str(v))
def test_pycon_block(page, line, text):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, f"{page.name}:{line}", str(page), line)
    assert test.examples, f"{page.name}:{line}: no >>> example in the block"
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    out = []
    result = runner.run(test, out=out.append)
    assert result.failed == 0, "".join(out)


def test_no_plain_python_blocks():
    plain = [f"{p.name}:{n}" for p, n, _ in blocks("python")]
    assert not plain, f"python blocks that no test runs (write them as ```pycon doctests): {plain}"


def python_c_lines():
    """`python -c '…'` one-liners of the sh blocks (the README's tour has one)."""
    import shlex
    for page, line, text in [b for lang in ("sh", "bash") for b in blocks(lang)]:
        for k, l in enumerate(text.splitlines()):
            words = shlex.split(l, comments=True) if "python -c " in l else []
            if words and words[0].endswith("python") and "-c" in words:
                yield f"{page.name}:{line + k}", words[words.index("-c") + 1]


def test_python_one_liners_run():
    import subprocess
    import sys
    found = list(python_c_lines())
    assert any(p.startswith("README.md") for p, _ in found), found
    for place, code in found:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.strip(), f"{place}: {code}\n{r.stderr}"
