#!/usr/bin/env bash
# Usage: logged.sh LOG COMMAND [ARG...]
# Runs one job's command (workflow/rules/common.smk, logged()): appends its stdout and stderr to LOG
# and to LOG's every-attempt log (x.log -> x.attempts.log), each attempt after a header line
# "=== attempt <UTC time> ===", and shows its stderr (progress lines, errors) on the terminal as it
# comes, each line tagged with LOG's name ("[x] ..."). Exits with the command's status.
set -euo pipefail
joblog=$1
shift
attempts="${joblog%.log}.attempts.log"
tag="[$(basename "$joblog" .log)] "
mkdir -p "$(dirname "$joblog")"
for file in "$joblog" "$attempts"; do  # the header on a line of its own, after a cut last line
  if [ -s "$file" ] && [ -n "$(tail -c 1 "$file")" ]; then echo >> "$file"; fi
done
echo "=== attempt $(date -u '+%Y-%m-%d %H:%M:%S UTC') ===" | tee -a "$joblog" "$attempts" > /dev/null
# stderr: through tee (both logs) to a read loop that tags each line as soon as it is complete (awk
# or sed would wait for a full input block); stdout: to both logs only.
{ "$@" 2>&1 1>&3 | tee -a "$joblog" "$attempts" | while IFS= read -r line || [ -n "$line" ]; do
    printf '%s\n' "$tag$line"
  done >&2; } 3>&1 | tee -a "$joblog" "$attempts" > /dev/null
