#!/bin/bash
# The crash campaign's "buffering wrapper": a site script that starts the trainer behind a pipe, so
# Python block-buffers its output and the launcher's child is bash, not Python.
unset PYTHONUNBUFFERED
set -o pipefail
/usr/bin/python3 "$(dirname "$0")/campaign_train.py" "$@" 2>&1 | cat
