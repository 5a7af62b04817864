#!/usr/bin/env python3
"""Compare first-screen rules offline, on the pages `serenqa discover` dumps.

    serenqa discover cv --bands 0.8 --dump /tmp/cvpages.jsonl
    serenqa discover first-screen --bands 0.8 --dump /tmp/realpages.jsonl
    python3 bench/screen_rules.py /tmp/cvpages.jsonl /tmp/realpages.jsonl

Each rule is written here again in Python (shared/src/screen.rs is the one the product runs;
the two agree on the shipped rule, which this script prints next to `discover cv`'s figures).
Printed per rule: held-out treatments in the top 10 of the disease pages, edges held out and
diseases held out; obvious drugs in the top 10 (edges held out); and on the served pages,
same-class drugs in the top 10 and identifier-matched flags in the top 20.
Rules tried beyond the shipped one: identifier-matched flags last, and a cap on drugs of one
pharmacologic class in the band (diversity).
"""
import collections
import json
import sys

OBVIOUS = ("same-class", "shared-target")


def order(c, band, ident_last=False, explained_in_place=True, none_known_in_place=True,
          unexplained_last=True, favour_new=True, cap=None):
    """c: [node, p, flagged, mechanism, held, by_identifier, classes, ...] per candidate."""
    idx = sorted(range(len(c)), key=lambda i: (-c[i][1], c[i][0]))
    obvious = lambda i: c[i][3] in OBVIOUS

    def aside(i):
        if ident_last and c[i][5]:
            return True
        return unexplained_last and c[i][2] and c[i][3] == "new"

    groups = [[i for i in idx if not aside(i)], [i for i in idx if aside(i)]]
    shown = collections.Counter()

    def demerit(i):
        flagged = c[i][2]
        if explained_in_place and obvious(i):
            flagged = False
        if none_known_in_place and c[i][3] == "none-known":
            flagged = False
        redundant = cap is not None and any(shown[k] >= cap for k in c[i][6])
        return (int(flagged), int(favour_new and obvious(i)), int(redundant))

    out = []
    for rest in groups:
        while rest:
            floor = band * c[rest[0]][1]
            pick = 0
            for k in range(1, len(rest)):
                if c[rest[k]][1] < floor:
                    break
                if demerit(rest[k]) < demerit(rest[pick]):
                    pick = k
            j = rest.pop(pick)
            out.append(j)
            for k in c[j][6]:
                shown[k] += 1
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: screen_rules.py CV_DUMP SERVED_DUMP")
    cv = [json.loads(l) for l in open(sys.argv[1])]
    real = [json.loads(l) for l in open(sys.argv[2])]

    def show(name, **kw):
        r = collections.Counter()
        for pg in cv:
            if pg["page"] != "disease":
                continue
            c = pg["cands"]
            o = order(c, **kw)[:10]
            k = pg["kind"]
            r[k + " hits"] += sum(c[i][4] for i in o)
            r[k + " obvious"] += sum(c[i][3] in OBVIOUS for i in o)
        for pg in real:
            c = pg["cands"]
            o = order(c, **kw)
            r["same class"] += sum(c[i][7] for i in o[:10])
            r["ident"] += sum(c[i][5] for i in o[:20])
        print(f"| {name} | {r['edges hits']} | {r['edges obvious']} | {r['diseases hits']} "
              f"| {r['same class']} | {r['ident']} |")

    print("| rule | hits@10 (edges) | obvious@10 (edges) | hits@10 (diseases) "
          "| served: same class@10 | served: by identifier@20 |")
    print("|---|---:|---:|---:|---:|---:|")
    show("plausibility", band=1.0, explained_in_place=False, unexplained_last=False,
         favour_new=False)
    show("shipped before (explained flags yield)", band=0.8, explained_in_place=False,
         none_known_in_place=False)
    show("shipped: band 0.8, unexplained-last", band=0.8)
    for b in (0.8, 0.6, 0.4, 0.3):
        show(f"band {b}, identifier-flagged last", band=b, ident_last=True)
    for cap in (1, 2, 3):
        show(f"band 0.8, at most {cap} per class", band=0.8, cap=cap)


if __name__ == "__main__":
    main()
