#!/usr/bin/env bash
# Usage: logged.sh LOG COMMAND [ARG...]
# Runs one job's command (workflow/rules/common.smk, logged()): appends its stdout and stderr to LOG
# and to LOG's every-attempt log (x.log -> x.attempts.log), each attempt after a header line
# "=== attempt <UTC time> ===", and shows its stderr (status lines, results, errors) on the terminal
# as it comes, each line tagged with LOG's name ("[x] ..."), after a first line naming the log. The
# command's stdout (the per-age and per-sweep detail) goes to the logs only. Under the workflow's
# display of its jobs (STRONGSOLVE_PROGRESS_DIR, strongsolve/progress.py) the job registers there
# (<pid>.job: its name) and its status goes to <pid>.status (STRONGSOLVE_PROGRESS_FILE), which the
# main Snakemake process shows. Exits with the command's status, after a line naming the log if it
# failed.
set -euo pipefail
joblog=$1
shift
attempts="${joblog%.log}.attempts.log"
name="$(basename "$joblog" .log)"
tag="[$name] "
mkdir -p "$(dirname "$joblog")"
for file in "$joblog" "$attempts"; do  # the header on a line of its own, after a cut last line
  if [ -s "$file" ] && [ -n "$(tail -c 1 "$file")" ]; then echo >> "$file"; fi
done
echo "=== attempt $(date -u '+%Y-%m-%d %H:%M:%S UTC') ===" | tee -a "$joblog" "$attempts" > /dev/null
if [ -n "${STRONGSOLVE_PROGRESS_DIR:-}" ] && [ -d "$STRONGSOLVE_PROGRESS_DIR" ]; then
  export STRONGSOLVE_PROGRESS_FILE="$STRONGSOLVE_PROGRESS_DIR/$$.status"
  trap 'rm -f "$STRONGSOLVE_PROGRESS_DIR/$$.job" "$STRONGSOLVE_PROGRESS_FILE"' EXIT
  echo "$name" > "$STRONGSOLVE_PROGRESS_DIR/$$.job"
else
  unset STRONGSOLVE_PROGRESS_FILE
fi
echo "${tag}started (log: $joblog)" >&2
# stderr: through tee (both logs) to a read loop that tags each line as soon as it is complete (awk
# or sed would wait for a full input block); stdout: to both logs only.
status=0
{ "$@" 2>&1 1>&3 | tee -a "$joblog" "$attempts" | while IFS= read -r line || [ -n "$line" ]; do
    printf '%s\n' "$tag$line"
  done >&2; } 3>&1 | tee -a "$joblog" "$attempts" > /dev/null || status=$?
if [ "$status" -ne 0 ]; then
  echo "${tag}failed with exit status $status; its log: $joblog" >&2
fi
exit "$status"
