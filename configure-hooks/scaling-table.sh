#!/usr/bin/env bash
# The scaling tables of docs/performance.md from the CSVs of `gpu-run.sh scaling` (apps-gpu-strong-npN.csv and
# apps-gpu-weak-npN.csv in DIR): the best solve time of each app and type on N GPUs, the strong speedup over one GPU,
# the weak efficiency of ex45 (one GPU's EX45_N^3 against N GPUs' N times as many rows), and each type against the
# first type of the run (aijcusparse).
#
#   bash configure-hooks/scaling-table.sh DIR          (REF: the reference type, aijcusparse by default)
set -euo pipefail
dir=${1:-out}
for kind in strong weak; do
  files=$(ls "$dir"/apps-gpu-"$kind"-np*.csv "$dir"/apps-gpu-"$kind"-*-np*.csv 2>/dev/null || true)
  [ -n "$files" ] || continue
  [ "$kind" = weak ] && files="$dir/apps-gpu-strong-np1.csv $files"
  # shellcheck disable=SC2086
  awk -F, -v kind="$kind" -v ref="${REF:-aijcusparse}" '
    FNR == 1 { next }
    $16 != "ok" || $4 == "gputime" { next }
    kind == "weak" && $1 != "ex45" { next }
    {
      k = $1 SUBSEP $2 SUBSEP $3
      if (!(k in t) || $5 < t[k]) t[k] = $5
      if (!($1 in sa)) { sa[$1] = 1; apps[++na] = $1 }
      if (!($2 in st)) { st[$2] = 1; types[++nt] = $2 }
      if (!($3 in sn)) { sn[$3] = 1; nps[++nn] = $3 }
    }
    END {
      # the reference type first
      for (b = 1; b <= nt; b++) if (types[b] == ref) { x = types[1]; types[1] = types[b]; types[b] = x }
      for (i = 1; i <= nn; i++) for (j = i + 1; j <= nn; j++) if (nps[j] + 0 < nps[i] + 0) { x = nps[i]; nps[i] = nps[j]; nps[j] = x }
      printf "\n%s scaling: best solve time (s) on N GPUs, a rank per GPU; %s; x %s: against %s on as many GPUs\n\n", kind, kind == "strong" ? "speedup over one GPU" : "weak efficiency (one GPU time / N GPU time)", types[1], types[1]
      printf "| app | type |"; for (i = 1; i <= nn; i++) printf " %s GPU |", nps[i]
      for (i = 2; i <= nn; i++) printf " %s %s |", kind == "strong" ? "speedup" : "efficiency", nps[i]
      for (i = 1; i <= nn; i++) printf " x %s, %s GPU |", types[1], nps[i]
      printf "\n| --- | --- |"; for (i = 1; i < 3 * nn; i++) printf " --- |"; printf "\n"
      for (a = 1; a <= na; a++) for (b = 1; b <= nt; b++) {
        for (i = 1; i <= nn; i++) if ((apps[a] SUBSEP types[b] SUBSEP nps[i]) in t) break
        if (i > nn) continue
        printf "| %s | %s |", apps[a], types[b]
        for (i = 1; i <= nn; i++) { k = apps[a] SUBSEP types[b] SUBSEP nps[i]; printf " %s |", (k in t) ? sprintf("%.3f", t[k]) : "-" }
        k = apps[a] SUBSEP types[b] SUBSEP nps[1]; t1 = (k in t) ? t[k] : 0
        for (i = 2; i <= nn; i++) {
          k = apps[a] SUBSEP types[b] SUBSEP nps[i]
          if (!(k in t) || !t1) { printf " - |"; continue }
          if (kind == "strong") printf " %.2fx |", t1 / t[k]; else printf " %.0f %% |", 100 * t1 / t[k]
        }
        for (i = 1; i <= nn; i++) {
          k = apps[a] SUBSEP types[b] SUBSEP nps[i]; r = apps[a] SUBSEP types[1] SUBSEP nps[i]
          printf " %s |", ((k in t) && (r in t)) ? sprintf("%.2fx", t[r] / t[k]) : "-"
        }
        printf "\n"
      }
    }' $files
done
