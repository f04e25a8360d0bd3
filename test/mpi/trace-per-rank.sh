#!/bin/sh
# FPM_TRACE under mpirun: one file per rank (trace.json -> trace.rankN.json),
# each holding its rank's chunks, and no file under the name itself; one
# process alone writes the file as named.
#   trace-per-rank.sh RUN_MPI MPIEXEC PROFILE_DIR FOLDER PROGRAM
set -e
run=$1
mpiexec=$2
profiles=$3
folder=$4
program=$5
rm -rf "$folder"
mkdir -p "$folder"
FPM_TRACE="$folder/trace.json" "$run" "$mpiexec" "$profiles" \
  -np 3 "$program" check equal || exit $?
for rank in 0 1 2; do
  if ! grep -q '"mpi.rows"' "$folder/trace.rank$rank.json"; then
    echo "trace-per-rank.sh: $folder/trace.rank$rank.json lacks rank $rank's chunks"
    exit 1
  fi
done
if [ -e "$folder/trace.json" ]; then
  echo "trace-per-rank.sh: $folder/trace.json was written under MPI"
  exit 1
fi
FPM_TRACE="$folder/alone.json" "$run" "$mpiexec" "$profiles" \
  -np 1 "$program" check equal || exit $?
if ! grep -q '"mpi.rows"' "$folder/alone.json" ||
  [ -e "$folder/alone.rank0.json" ]; then
  echo "trace-per-rank.sh: one rank alone did not write $folder/alone.json"
  exit 1
fi
echo "trace-per-rank.sh: ok"
