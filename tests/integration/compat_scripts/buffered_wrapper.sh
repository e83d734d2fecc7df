#!/bin/bash
# A wrapper as clusters write them: python started by a shell script, output block-buffered.
unset PYTHONUNBUFFERED
exec /usr/bin/python3 "$(dirname "$0")/buffered_train.py" "$@"
