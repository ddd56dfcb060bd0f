#!/bin/sh
# A side-effecting command tool for the crash-resume test: appends the call's item to
# effects.log in its working directory (the run's workspace) and returns {"item": ITEM}.
read -r args
item=$(printf '%s' "$args" | sed -n 's/.*"item": *"\([^"]*\)".*/\1/p')
printf '%s\n' "$item" >> effects.log
printf '{"item": "%s"}\n' "$item"
