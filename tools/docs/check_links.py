"""Offline link check of the repository's markdown.

Every relative link and image in ``README.md``, ``docs/**/*.md`` and the
READMEs of ``configs/`` and ``projects/`` must name a file or folder that
exists in the repository, and every ``#anchor`` a heading (GitHub's and MyST's
slug) or an
explicit ``id`` / ``name`` of the page it points to. External ``http(s)``
links are only checked for their syntax: CI cannot reach the internet, so
Sphinx's ``linkcheck`` is not used. Code is not read. Run by ``make docs``
(``python tools/docs/check_links.py [--root DIR]``).

Exit status 1 and one ``file:line: problem`` per broken link when any is.
"""
import argparse
import glob
import os
import os.path as osp
import re
import sys
from typing import Dict, Iterator, List, Set, Tuple
from urllib.parse import unquote, urlparse

ROOT = osp.dirname(osp.dirname(osp.dirname(osp.abspath(__file__))))
# Sphinx's output and the pages docs/conf.py copies from configs/, projects/.
GENERATED = ('docs/_build/', 'docs/model_zoo/', 'docs/projects/')

_FENCE = re.compile(r'^\s*(`{3,}|~{3,})')
_CODE_SPAN = re.compile(r'(`+)(.+?)\1')
_HEADING = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
_INLINE = re.compile(r'!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?'
                     r'(?:\s+["\'(][^)]*)?\)')
_REFDEF = re.compile(r'^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)')
_HTML_LINK = re.compile(
    r'<(?:a|img)\b[^>]*?\b(?:href|src)\s*=\s*["\']'
    r'([^"\']*)["\']', re.I)
_HTML_ID = re.compile(r'\b(?:id|name)\s*=\s*["\']([^"\']+)["\']', re.I)
_MD_LINK_TEXT = re.compile(r'!?\[([^\]]*)\]\([^)]*\)')


def markdown_files(root: str) -> List[str]:
    """README.md, docs/**/*.md and the READMEs of configs/ and projects/
    under ``root`` (relative paths, sorted), leaving out generated folders."""
    found = [p for p in ['README.md'] if osp.isfile(osp.join(root, p))]
    for pattern in ('docs/**/*.md', 'configs/**/README.md',
                    'projects/**/README.md'):
        for path in glob.glob(osp.join(root, pattern), recursive=True):
            rel = osp.relpath(path, root).replace(os.sep, '/')
            if not rel.startswith(GENERATED):
                found.append(rel)
    return sorted(set(found))


def prose_lines(text: str) -> Iterator[Tuple[int, str]]:
    """(line number, line) outside fenced code blocks, with inline code
    replaced by a placeholder of the same kind (so that a link whose text is
    code still parses, and a link written inside code is not one)."""
    fence = None
    for number, line in enumerate(text.splitlines(), 1):
        match = _FENCE.match(line)
        if fence is not None:
            if match and match.group(1)[0] == fence[0] \
                    and len(match.group(1)) >= len(fence) \
                    and not line.strip()[len(match.group(1)):].strip():
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        yield number, _CODE_SPAN.sub(lambda m: 'code', line)


def slugify(title: str) -> str:
    """A heading's anchor as GitHub and MyST (``myst_heading_anchors``)
    make it: markup dropped, lower case, spaces to ``-``, punctuation other
    than ``-`` and ``_`` removed."""
    text = _MD_LINK_TEXT.sub(r'\1', title)
    text = re.sub(r'<[^>]+>', '', text)
    text = re.sub(r'[*`]', '', text)
    text = text.strip().lower().replace(' ', '-')
    return re.sub(r'[^\w\-]', '', text)


def anchors(text: str) -> Set[str]:
    """Every anchor a page offers: its headings' slugs (a repeated slug
    gets ``-1``, ``-2`` ... as on GitHub) and explicit HTML ids/names."""
    found, seen = set(), {}  # type: Set[str], Dict[str, int]
    fence = None
    for line in text.splitlines():
        match = _FENCE.match(line)
        if fence is not None:
            if match and match.group(1)[0] == fence[0]:
                fence = None
            continue
        if match:
            fence = match.group(1)
            continue
        found.update(_HTML_ID.findall(line))
        heading = _HEADING.match(line)
        if heading:
            slug = slugify(heading.group(2))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f'{slug}-{count}')
    return found


def links(text: str) -> Iterator[Tuple[int, str]]:
    """(line number, target) of every inline link or image, reference
    definition and HTML ``href`` / ``src`` outside code."""
    for number, line in prose_lines(text):
        for pattern in (_INLINE, _REFDEF, _HTML_LINK):
            for target in pattern.findall(line):
                yield number, target


def check_external(target: str) -> str:
    """The problem with an external link's syntax, or ''."""
    if re.search(r'\s', target):
        return 'has white space'
    parsed = urlparse(target)
    if parsed.scheme == 'mailto':
        return '' if '@' in parsed.path else 'mailto: without an address'
    if not parsed.netloc or '.' not in parsed.netloc.split(':')[0] \
            and parsed.netloc.split(':')[0] != 'localhost':
        return 'has no host'
    return ''


def check_target(root: str, source: str, target: str,
                 cache: Dict[str, Set[str]]) -> str:
    """The problem with one link of ``source`` (a path relative to ``root``),
    or '' when it resolves."""
    if not target:
        return 'empty link'
    scheme = urlparse(target).scheme
    if scheme in ('http', 'https', 'mailto'):
        return check_external(target)
    if scheme:
        return f'scheme {scheme!r} is neither http(s) nor a relative path'
    path, _, anchor = target.partition('#')
    path = unquote(path)
    if path.startswith('/'):
        return 'absolute path (write it relative to this file)'
    if path:
        full = osp.normpath(osp.join(root, osp.dirname(source), path))
        if osp.relpath(full, root).startswith('..'):
            return 'points outside the repository'
        if not osp.exists(full):
            return f'{osp.relpath(full, root)} does not exist'
    else:
        full = osp.join(root, source)
    if not anchor:
        return ''
    if osp.isdir(full):
        full = osp.join(full, 'README.md')
    if not full.endswith('.md') or not osp.isfile(full):
        return (f'anchor #{anchor} on {osp.relpath(full, root)}, which is '
                f'not a markdown page')
    if full not in cache:
        with open(full, encoding='utf-8') as f:
            cache[full] = anchors(f.read())
    if unquote(anchor) not in cache[full]:
        return f'no heading or id #{anchor} in {osp.relpath(full, root)}'
    return ''


def check(root: str = ROOT) -> Tuple[List[str], int]:
    """(problems as ``file:line: target: problem``, links checked)."""
    problems, count, cache = [], 0, {}
    for source in markdown_files(root):
        with open(osp.join(root, source), encoding='utf-8') as f:
            text = f.read()
        for number, target in links(text):
            count += 1
            problem = check_target(root, source, target, cache)
            if problem:
                problems.append(f'{source}:{number}: {target}: {problem}')
    return problems, count


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument(
        '--root',
        default=ROOT,
        help='repository root (default: this checkout)')
    args = parser.parse_args(argv)
    problems, count = check(args.root)
    for problem in problems:
        print(problem)
    files = len(markdown_files(args.root))
    if problems:
        print(f'{len(problems)} broken of {count} links in {files} files')
        return 1
    print(f'links: {count} links in {files} markdown files resolve')
    return 0


if __name__ == '__main__':
    sys.exit(main())
