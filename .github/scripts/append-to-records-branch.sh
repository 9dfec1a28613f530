#!/usr/bin/env bash
# Append a file's lines to a file of the branch hypershell-records and push (made on first use),
# for the drift check's status records (records/<stack>.jsonl) and the deploy history
# (history/<stack>.jsonl): docs/history.md. Stacks' jobs push at once: a rejected push is
# rebased and tried again, five times; one file per stack and kind, so a rebase never conflicts.
#
#   append-to-records-branch.sh PATH-IN-BRANCH FILE MESSAGE
#
# Environment: STACK, GH_TOKEN (contents: write), RUNNER_TEMP; run in the job's checkout (its
# origin is the repository). The checkout keeps no credentials (persist-credentials: false):
# the token goes to these git commands alone, as a header, never into a URL or a config on disk.
set -euo pipefail
target="$1"
source="$2"
message="$3"
branch=hypershell-records
records="${RUNNER_TEMP:-/tmp}/records-$STACK"
rm -rf "$records"
auth="AUTHORIZATION: basic $(printf 'x-access-token:%s' "$GH_TOKEN" | base64 -w0)"
g() {
  git -C "$records" -c "http.extraheader=$auth" -c user.name="github-actions[bot]" \
    -c user.email="41898282+github-actions[bot]@users.noreply.github.com" "$@"
}
git init -q "$records"
g remote add origin "$(git remote get-url origin)"
set +e
g ls-remote --exit-code --heads origin "$branch" > /dev/null
found=$?
set -e
case "$found" in
  0) g fetch -q origin "$branch" && g checkout -q -B "$branch" FETCH_HEAD ;;
  2) g checkout -q --orphan "$branch" ;;  # first use: no such branch yet
  *) echo "::error::git ls-remote exited with code $found"; exit 1 ;;
esac
mkdir -p "$(dirname "$records/$target")"
cat "$source" >> "$records/$target"
g add "$target"
g commit -q -m "$message"
for attempt in 1 2 3 4 5; do
  if g push -q origin "HEAD:refs/heads/$branch"; then
    echo "Recorded $target in $branch ($message)"
    exit 0
  fi
  sleep "$attempt"
  g pull -q --rebase origin "$branch" || { g rebase --abort 2> /dev/null || true; }
done
echo "::error::could not push $target to $branch after 5 attempts"
exit 1
