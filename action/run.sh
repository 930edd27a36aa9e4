#!/usr/bin/env bash
# the action's run step (action.yml): turns the inputs (BHRAIN_IN_*, given by env, never spliced into a script) into
# bhrain's flags, runs it with --output json, writes the step's outputs (action/outputs.mjs), then exits with bhrain's
# exit code, so the step fails exactly when the run did, and its outputs are set either way
set -eo pipefail

action_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out_dir="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/bhrain-action-XXXXXX")"
json_file="$out_dir/result.json"

# a bad input of the action itself: the same exit code and termination as a bad flag of the CLI (2, usage)
usage_error() {
  echo "::error title=bhrain::$1"
  node "$action_dir/outputs.mjs" --usage-error "$1" --exit-code 2
  exit 2
}

is_bool() { [ "$1" = true ] || [ "$1" = false ]; }

case "$BHRAIN_IN_SKILL" in
  act | ask) ;;
  *) usage_error "input skill must be act or ask, not '$BHRAIN_IN_SKILL'" ;;
esac
is_bool "$BHRAIN_IN_FAIL_ON_DENIED" || usage_error "input fail-on-denied must be true or false, not '$BHRAIN_IN_FAIL_ON_DENIED'"
cd -- "${BHRAIN_IN_WORKING_DIRECTORY:-.}" || usage_error "input working-directory: no directory '$BHRAIN_IN_WORKING_DIRECTORY'"

args=("$BHRAIN_IN_SKILL" --output json)
add() { if [ -n "$2" ]; then args+=("$1" "$2"); fi; }
add --input "$BHRAIN_IN_PROMPT"
add --atom "$BHRAIN_IN_ATOM"
add --model "$BHRAIN_IN_MODEL"
add --permission "$BHRAIN_IN_PERMISSION"
add --max-budget-usd "$BHRAIN_IN_MAX_BUDGET_USD"
add --max-wall-time "$BHRAIN_IN_MAX_WALL_TIME"
add --json-schema "$BHRAIN_IN_JSON_SCHEMA"
if [ "$BHRAIN_IN_FAIL_ON_DENIED" = true ]; then args+=(--fail-on-denied); fi
# read splits words without globbing: a domain pattern like *.github.com stays as written
read -r -a domains <<<"$(printf '%s' "$BHRAIN_IN_ALLOW_DOMAIN" | tr ',\n' '  ')"
for domain in "${domains[@]}"; do args+=(--allow-domain "$domain"); done
while IFS= read -r line; do
  if [ -n "${line//[[:space:]]/}" ]; then args+=(--mcp-config "$line"); fi
done <<<"$BHRAIN_IN_MCP_CONFIG"
while IFS= read -r line; do
  if [ -n "${line//[[:space:]]/}" ]; then args+=("$line"); fi
done <<<"$BHRAIN_IN_ARGS"

# the GitHub token (act): masked for the job's GitHub hosts (github.com, api.github.com and uploads.github.com, or a
# GitHub Enterprise server's own from GITHUB_SERVER_URL and GITHUB_API_URL): bash sees a placeholder, and bhrain's proxy
# writes the token only into https requests to them. ask has no network, so it gets no token at all
if [ -n "$BHRAIN_IN_GITHUB_TOKEN" ]; then
  if [ "$BHRAIN_IN_SKILL" = act ]; then
    host_of() { printf '%s' "$1" | sed -E 's#^[A-Za-z]+://([^/:]+).*#\1#'; }
    server_host="$(host_of "${GITHUB_SERVER_URL:-https://github.com}")"
    api_host="$(host_of "${GITHUB_API_URL:-https://api.github.com}")"
    github_hosts="$server_host,$api_host"
    if [ "$server_host" = github.com ]; then github_hosts="$github_hosts,uploads.github.com"; fi
    export GH_TOKEN="$BHRAIN_IN_GITHUB_TOKEN" GITHUB_TOKEN="$BHRAIN_IN_GITHUB_TOKEN"
    args+=(--mask-env "GH_TOKEN=$github_hosts" --mask-env "GITHUB_TOKEN=$github_hosts")
  else
    echo "::warning title=bhrain::input github-token is for act (its bash reaches GitHub through bhrain's proxy); ask has no network, so it was not given to the run"
  fi
fi
unset BHRAIN_IN_GITHUB_TOKEN

# the prompt file is the task on stdin (with a prompt, the context after it); otherwise stdin is empty, not a wait
stdin_file=/dev/null
if [ -n "$BHRAIN_IN_PROMPT_FILE" ]; then
  [ -f "$BHRAIN_IN_PROMPT_FILE" ] || usage_error "input prompt-file: no file '$BHRAIN_IN_PROMPT_FILE'"
  stdin_file="$BHRAIN_IN_PROMPT_FILE"
fi

# a key input sets its env var only when given, so one set by the workflow's env stays when the input is empty
for name in ANTHROPIC_API_KEY ANTHROPIC_AUTH_TOKEN ANTHROPIC_BASE_URL QWEN_API_KEY DASHSCOPE_API_KEY QWEN_BASE_URL OPENAI_API_KEY OPENAI_BASE_URL TAVILY_API_KEY BRAVE_API_KEY; do
  from="BHRAIN_IN_KEY_$name"
  if [ -n "${!from}" ]; then export "$name=${!from}"; fi
  unset "$from"
done

set +e
node "$action_dir/../bin/bhrain" "${args[@]}" <"$stdin_file" >"$json_file"
code=$?
set -e

structured=false
if [ -n "$BHRAIN_IN_JSON_SCHEMA" ]; then structured=true; fi
# a result that cannot be read fails the step even when bhrain exited 0 (outputs.mjs says why)
if ! node "$action_dir/outputs.mjs" --json-file "$json_file" --exit-code "$code" --structured "$structured"; then
  if [ "$code" = 0 ]; then code=1; fi
fi
exit "$code"
