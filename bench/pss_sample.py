#!/usr/bin/env python3
"""Memory of the processes of one measurement (`bench/pss_serve_eval.sh`): polls
/proc/PID/smaps_rollup of each named process (RSS, PSS and their anonymous / file parts) and
/proc/meminfo every 0.2 s until a stop file appears, then writes the maxima and the moment of
the largest PSS sum as JSON. PSS splits a shared file page between the processes mapping it,
so the PSS sum counts a memory-mapped snapshot once.

usage: pss_sample.py OUT.json STOPFILE name=PIDFILE ...  (a PIDFILE holds one pid; read when present)
"""
import json, os, sys, time
out, stop, specs = sys.argv[1], sys.argv[2], sys.argv[3:]
def meminfo():
    d = {}
    for l in open('/proc/meminfo'):
        k, v = l.split(':'); d[k] = int(v.split()[0]) * 1024
    used = d['MemTotal'] - d['MemFree'] - d['Buffers'] - d['Cached'] - d['SReclaimable']
    return used, d['Buffers'] + d['Cached'] + d['SReclaimable']
def rollup(pid):
    r = {}
    try:
        for l in open(f'/proc/{pid}/smaps_rollup'):
            p = l.split()
            if len(p) >= 3 and p[-1] == 'kB':
                r[p[0].rstrip(':')] = int(p[1]) * 1024
    except OSError:
        return None
    return r
base_used, base_cache = meminfo()
best = {n: {} for n, _ in (s.split('=') for s in specs)}
peak_sum = {'pss_sum': 0}
peak_used = 0; peak_cache = 0
while not os.path.exists(stop):
    rs = {}
    for s in specs:
        n, f = s.split('=')
        try:
            pid = int(open(f).read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
        r = rollup(pid)
        if r:
            rs[n] = r
            b = best[n]
            for k in ('Rss', 'Pss', 'Pss_Anon', 'Pss_File', 'Shared_Clean', 'Private_Dirty'):
                b[k] = max(b.get(k, 0), r.get(k, 0))
    s = sum(r['Pss'] for r in rs.values())
    if s > peak_sum['pss_sum']:
        peak_sum = {'pss_sum': s, **{n: {k: r.get(k, 0) for k in ('Rss', 'Pss', 'Pss_Anon', 'Pss_File')} for n, r in rs.items()}}
    u, c = meminfo(); peak_used = max(peak_used, u); peak_cache = max(peak_cache, c)
    time.sleep(0.2)
json.dump({'base_used': base_used, 'base_cache': base_cache, 'peak_used': peak_used,
           'used_delta': peak_used - base_used, 'peak_cache': peak_cache,
           'per_process_max': best, 'at_peak_pss_sum': peak_sum}, open(out, 'w'), indent=1)
