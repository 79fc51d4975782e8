#!/bin/sh
# How the fio results in this folder were made (fio 3.33, Debian 12, run as root on the 2-vCPU
# development VM whose disk is vda, a virtio block device: `lsblk -d -o NAME,ROTA,MODEL,TRAN`
# shows no model and no transport, so it is not NVMe and the scenario uses a generic topology).
#
#   sh examples/measured/measure_vda.sh            # ~40 s; writes the three JSON files next to this script
#
# 1. vda_randread_4k_qd1.json   - 4 KiB random reads at QD1: the service time and its spread
# 2. vda_randread_4k_qd64.json  - the same at QD64: the most IOPS the disk gives (its knee)
#    (1 and 2 set the parameters of vda_virtio_generic.yaml; see the comments there)
# 3. vda_randread_4k_qd4_qd16.json - the check: QD4 and QD16, two stonewalled groups,
#    imported and compared with `flashplan import fio ... --scenario vda_virtio_generic.yaml --compare`
#
# The test file lives in /tmp on vda's ext4 root (O_DIRECT works there); it is removed at the end.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
file=${FLASHPLAN_FIO_FILE:-/tmp/flashplan-measure/fio.dat}
mkdir -p "$(dirname "$file")"
common="--filename=$file --size=512M --direct=1 --ioengine=libaio --rw=randread --bs=4k --runtime=10 --time_based --lat_percentiles=1"

fio --name=vda-qd1 $common --iodepth=1 --output-format=json --output="$here/vda_randread_4k_qd1.json"
fio --name=vda-qd64 $common --iodepth=64 --output-format=json --output="$here/vda_randread_4k_qd64.json"
fio $common --output-format=json --output="$here/vda_randread_4k_qd4_qd16.json" \
    --name=vda-qd4 --iodepth=4 \
    --name=vda-qd16 --iodepth=16 --stonewall
rm -f "$file"
