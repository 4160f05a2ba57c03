#!/usr/bin/env python3
"""Chart of scripts/compare_opensm.py's rows: per fabric, the virtual lanes
DFSSSP and LASH use beside the lossless priorities Tagger needs on the
same routes, and Tagger on Nue's one-lane routes. An engine that needed
more than the fabric's 8 lanes failed (OpenSM fell back to minhop); its
bar is hatched at its requirement, and Tagger's bar beside it is what the
fallback routes need. Writes a standalone SVG (pyarrow reads the rows).

    python3 scripts/plot_opensm.py peers.parquet docs/opensm-peers.svg
    python3 scripts/plot_opensm.py --markdown peers.parquet   # the table
"""
import os
import sys
from html import escape

ENGINES = [("dfsssp", "DFSSSP", "#4477aa"), ("lash", "LASH", "#228833")]
TAGGER = "#ee6677"
NUE = "#aa3377"


def label(fabric, switches):
    family = fabric.split(":")[0]
    names = {"jellyfish": "Jellyfish", "fattree": "fat-tree", "hyperx": "HyperX"}
    return names.get(family, family), switches


def svg(rows):
    fabrics = []
    for r in rows:
        key = (r["fabric"], r["switches"])
        if key not in fabrics:
            fabrics.append(key)
    by = {(r["fabric"], r["engine"]): r for r in rows}
    top = max([9] + [r["engine_vls"] or 0 for r in rows] + [r["priorities"] or 0 for r in rows])
    bar, gap = 13, 24
    group = bar * 5 + gap
    left, right, head, foot = 56, 150, 84, 74
    width = max(left + right + group * len(fabrics), 760)
    height = 400
    plot_h = height - head - foot
    y = lambda v: head + plot_h - v * plot_h / top  # noqa: E731
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="13">',
           '<defs><pattern id="h" width="6" height="6" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="6" height="6" fill="#fff"/>'
           '<line x1="0" y1="0" x2="0" y2="6" stroke="#888" stroke-width="3"/></pattern></defs>',
           f'<rect width="{width}" height="{height}" fill="#fff"/>',
           f'<text x="{left}" y="20" font-size="15" font-weight="bold">Lossless classes on the '
           'same routes: InfiniBand virtual lanes vs Tagger priorities</text>']
    legend = [(c, f"{n} VLs") for _, n, c in ENGINES] + [(TAGGER, "Tagger on those routes (or the fallback's)"),
                                                          (NUE, "Tagger on Nue's 1-VL routes"),
                                                          ("url(#h)", "engine needs more than 8: failed")]
    # Three entries a line, in columns.
    for k, (color, text) in enumerate(legend):
        x, ly = left + (k % 3) * 250, 32 + (k // 3) * 20
        out.append(f'<rect x="{x}" y="{ly}" width="12" height="12" fill="{color}" stroke="#555" '
                   'stroke-width="0.5"/>')
        out.append(f'<text x="{x + 17}" y="{ly + 11}">{escape(text)}</text>')
    for v in range(0, top + 1):
        stroke = "#999" if v in (0, 8) else "#e5e5e5"
        dash = ' stroke-dasharray="4 3"' if v == 8 else ""
        out.append(f'<line x1="{left}" x2="{width - right}" y1="{y(v):.1f}" y2="{y(v):.1f}" '
                   f'stroke="{stroke}"{dash}/>')
        out.append(f'<text x="{left - 8}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
    plot_right = width - right
    out.append(f'<text x="{plot_right + 6}" y="{y(8) + 4:.1f}" fill="#555">8 VLs: what the</text>')
    out.append(f'<text x="{plot_right + 6}" y="{y(8) + 20:.1f}" fill="#555">fabric has</text>')
    out.append(f'<text transform="translate(16 {head + plot_h / 2}) rotate(-90)" '
               'text-anchor="middle">classes (VLs or priorities)</text>')
    for i, (fabric, switches) in enumerate(fabrics):
        x0 = left + gap / 2 + i * group
        bars = []
        for engine, _, color in ENGINES:
            r = by.get((fabric, engine))
            if r is None:
                bars += [None, None]
                continue
            fill = "url(#h)" if r["engine_failed"] else color
            bars.append((r["engine_vls"], fill, f"{engine} {r['engine_vls']}"))
            bars.append((r["priorities"], TAGGER, f"tagger {r['priorities']}"))
        nue = by.get((fabric, "nue-1vl"))
        bars.append((nue["priorities"], NUE, f"tagger on nue {nue['priorities']}") if nue else None)
        for j, b in enumerate(bars):
            if not b or b[0] is None:
                continue
            v, fill, title = b
            bx = x0 + j * bar
            out.append(f'<rect x="{bx:.1f}" y="{y(v):.1f}" width="{bar - 1}" '
                       f'height="{y(0) - y(v):.1f}" fill="{fill}" stroke="#555" stroke-width="0.5">'
                       f"<title>{escape(fabric)}: {escape(title)}</title></rect>")
        cx = x0 + 2.5 * bar
        family, size = label(fabric, switches)
        out.append(f'<text x="{cx:.1f}" y="{y(0) + 17:.1f}" text-anchor="middle">'
                   f"{escape(family)}</text>")
        out.append(f'<text x="{cx:.1f}" y="{y(0) + 33:.1f}" text-anchor="middle">{size}</text>')
    out.append(f'<text x="{left}" y="{height - 14}" fill="#555">family and switches; every '
               "Tagger plan verified (scripts/compare_opensm.py, docs/priorities.md)</text>")
    out.append("</svg>")
    return "\n".join(out) + "\n"


def markdown(rows):
    """The rows as docs/priorities.md's table: per fabric, each engine's
    VLs and Tagger's priorities on its routes."""
    by = {(r["fabric"], r["engine"]): r for r in rows}
    fabrics = []
    for r in rows:
        if (r["fabric"], r["switches"], r["hcas"]) not in fabrics:
            fabrics.append((r["fabric"], r["switches"], r["hcas"]))

    def engine(r):
        if r is None:
            return "-"
        return f"needs {r['engine_vls']}: fails" if r["engine_failed"] else str(r["engine_vls"])

    def tagger(r):
        if r is None or r["priorities"] is None:
            return "-"
        how = "proven" if r["optimal"] and r["tagger_algo"].startswith("exact") else (
            "optimal" if r["optimal"] else f"bound {r['lower_bound']}")
        return f"{r['priorities']} ({how})"

    def nue(r):
        if r is None or r["priorities"] is None:
            return "-"
        return f"{r['priorities']} ({r['stretch_mean']:.2f}, +{r['stretch_max_extra_hops']})"

    lines = ["| fabric | switches, HCAs | DFSSSP VLs | Tagger on DFSSSP's routes | LASH VLs "
             "| Tagger on LASH's routes | Tagger on Nue's routes, 1 VL (stretch, most extra hops) "
             "| Tagger on Nue's routes, 8 VLs (stretch) |",
             "|---|---|---|---|---|---|---|---|"]
    for fabric, switches, hcas in fabrics:
        g = lambda e: by.get((fabric, e))  # noqa: E731
        lines.append(f"| `{fabric}` | {switches}, {hcas} | {engine(g('dfsssp'))} | {tagger(g('dfsssp'))} "
                     f"| {engine(g('lash'))} | {tagger(g('lash'))} | {nue(g('nue-1vl'))} "
                     f"| {nue(g('nue-8vl'))} |")
    return "\n".join(lines) + "\n"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--markdown":
        import pyarrow.parquet as pq
        sys.stdout.write(markdown(pq.read_table(sys.argv[2]).to_pylist()))
        return
    if len(sys.argv) != 3:
        sys.exit("usage: plot_opensm.py PEERS.parquet OUT.svg | plot_opensm.py --markdown PEERS.parquet")
    try:
        import pyarrow.parquet as pq
    except ImportError:
        sys.exit("pyarrow is missing: pip install -r scripts/requirements.txt")
    rows = pq.read_table(sys.argv[1]).to_pylist()
    if not rows:
        sys.exit(f"{sys.argv[1]} has no rows")
    tmp = sys.argv[2] + ".tmp"
    with open(tmp, "w") as f:
        f.write(svg(rows))
    os.replace(tmp, sys.argv[2])


if __name__ == "__main__":
    main()
