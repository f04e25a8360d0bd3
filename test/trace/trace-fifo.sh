#!/bin/sh
# FPM_TRACE naming a FIFO: with no reader the program ends (status 0) with
# one line naming the FIFO, where it waited for a reader for ever; with a
# reader the trace goes through it. Every wait here is bounded by timeout.
#   trace-fifo.sh PROGRAM FOLDER
program=$1
folder=$2
rm -rf "$folder"
mkdir -p "$folder"
fifo="$folder/trace.fifo"
mkfifo "$fifo" || exit 1

FPM_TRACE="$fifo" timeout 60 "$program" 2>"$folder/stderr"
status=$?
cat "$folder/stderr"
if [ $status -ne 0 ]; then
  echo "trace-fifo.sh: with no reader the program exited with $status (124: it hung)"
  exit 1
fi
expected="fpm: cannot write trace '$fifo': a FIFO that no process reads (waited 2 s); nothing written: start its reader first, or name a file"
if [ "$(cat "$folder/stderr")" != "$expected" ]; then
  echo "trace-fifo.sh: expected on stderr: $expected"
  exit 1
fi

timeout 60 cat "$fifo" >"$folder/read" &
reader=$!
FPM_TRACE="$fifo" timeout 60 "$program" || exit 1
wait $reader
if ! grep -q '"trace.fifo.loop"' "$folder/read"; then
  echo "trace-fifo.sh: the reader got no trace"
  exit 1
fi
echo "trace-fifo.sh: ok"
