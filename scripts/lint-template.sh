#!/usr/bin/env bash
# Lints template.yaml with cfn-lint and `sam validate --lint` (offline, no credentials).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(scripts/tools.sh lint)
export SAM_CLI_TELEMETRY=0
"$BIN/cfn-lint" template.yaml
"$BIN/sam" validate --lint --region us-east-1 -t template.yaml
