# Sourced by bench scripts (pages.sh, thumbs.sh, ab.sh, contention.sh): what a server's
# processes cost, read from /proc. CPU time a request is steadier than
# requests/s on a shared machine; a core's busy share says whether the
# server or the load generator was the limit.

# CPU time (user + system) of the processes PID..., in clock ticks (`getconf CLK_TCK`).
cpu_ticks() {
  local total=0 pid fields
  for pid in "$@"; do
    fields=$(cut -d')' -f2 "/proc/$pid/stat")
    total=$(( total + $(awk '{print $12 + $13}' <<<"$fields") ))
  done
  echo "$total"
}

# The server's core (SERVER_CPU, with PIN=1): its busy and all ticks from
# /proc/stat; "0 0" when nothing is pinned.
core_ticks() {
  [ "${PIN:-0}" = 1 ] || { echo "0 0"; return; }
  awk -v cpu="cpu$SERVER_CPU" '$1 == cpu { all = 0; for (i = 2; i <= NF; i++) all += $i; print all - $5 - $6, all }' /proc/stat
}

# core_busy "BUSY0 ALL0" "BUSY1 ALL1" -> the percent busy between two core_ticks readings, or "-"
# (100%: the server was the limit; less: it waited for the load generator).
core_busy() {
  local b0 a0 b1 a1
  read -r b0 a0 <<<"$1"; read -r b1 a1 <<<"$2"
  [ $((a1 - a0)) -gt 0 ] && echo $(( 100 * (b1 - b0) / (a1 - a0) )) || echo "-"
}

# The CPU ticks (user + system) of each thread of the processes PID..., one
# "TID TICKS" line each: two readings give how a server's work fell on its
# workers (see busiest_share).
thread_ticks() {
  local pid task
  for pid in "$@"; do
    for task in /proc/"$pid"/task/*; do
      # (a thread that ended between the listing and the read is left out)
      cut -d')' -f2 "$task/stat" 2>/dev/null | awk -v tid="${task##*/}" '{print tid, $12 + $13}' || true
    done
  done
}

# busiest_share "READING0" "READING1" -> the busiest thread's percent of the
# ticks between two thread_ticks readings, or "-". With N workers, 100/N% is
# an even split of the connections; 100% is all of them on one worker.
busiest_share() {
  join <(sort <<<"$1") <(sort <<<"$2") | awk '{d = $3 - $2; if (d > 0) { all += d; if (d > top) top = d } }
    END { if (all > 0) printf "%d\n", 100 * top / all; else print "-" }'
}
