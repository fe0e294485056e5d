#!/usr/bin/env bash
# Lints template.yaml with cfn-lint, `sam validate --lint` and checkov, and the
# deploy workflow (.github/workflows) against GitHub's workflow schema
# (check-jsonschema) and with zizmor's security audits (offline, no credentials).
# Each checkov finding is fixed or skipped in the template with its reason
# (Metadata.checkov.skip).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=$(scripts/tools.sh lint)
export SAM_CLI_TELEMETRY=0
"$BIN/cfn-lint" template.yaml
"$BIN/sam" validate --lint --region us-east-1 -t template.yaml
SECURITY=$(scripts/tools.sh security)
"$SECURITY/checkov" -f template.yaml --framework cloudformation --compact --quiet --skip-download
WORKFLOW=$(scripts/tools.sh workflow)
"$WORKFLOW/check-jsonschema" --builtin-schema vendor.github-workflows .github/workflows/*.yml
"$WORKFLOW/zizmor" --offline --no-progress .github/workflows/*.yml
