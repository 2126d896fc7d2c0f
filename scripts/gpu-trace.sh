#!/usr/bin/env bash
# `make gpu-trace`: the Alibaba GPU trace v2023 CSVs that the docs, bench/bench_gpu.py and the
# public-data tests use, into data/alibaba-gpu-v2023/, each checked against
# data/alibaba-gpu-v2023.sha256. A file already there with the right checksum stays; one found in
# ../shared/data/alibaba-gpu-v2023/ (a copy beside the clone) is copied; any other is downloaded
# from the trace's public repository at the commit that added it. GPU_TRACE_URL overrides where
# from (a mirror, or file:///some/dir).
set -euo pipefail
cd "$(dirname "$0")/.."

SUMS=data/alibaba-gpu-v2023.sha256
DEST=data/alibaba-gpu-v2023
SHARED=../shared/data/alibaba-gpu-v2023
# github.com/alibaba/clusterdata, folder cluster-trace-gpu-v2023/csv/, commit 50a91c7c (2023-06-05).
URL=${GPU_TRACE_URL:-https://raw.githubusercontent.com/alibaba/clusterdata/50a91c7c74abe3b658188dc78ac1dd302970d40c/cluster-trace-gpu-v2023/csv}

mkdir -p "$DEST"
while read -r sum name; do
    target="$DEST/$name"
    if [ -f "$target" ] && echo "$sum  $target" | sha256sum --check --status; then
        continue
    fi
    if [ -f "$SHARED/$name" ]; then
        cp "$SHARED/$name" "$target.part" && chmod 644 "$target.part"
    else
        echo "gpu-trace: downloading $name"
        curl --fail --silent --show-error --location --retry 3 --output "$target.part" "$URL/$name"
    fi
    if ! echo "$sum  $target.part" | sha256sum --check --status; then
        rm -f "$target.part"
        echo "gpu-trace: $name does not have the checksum of $SUMS (sha256 $sum); nothing kept" >&2
        exit 1
    fi
    mv "$target.part" "$target"
done < "$SUMS"
echo "gpu-trace: $(wc -l < "$SUMS") files in $DEST, checksums match $SUMS"
