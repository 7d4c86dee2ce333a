#!/bin/sh
# Rebuild checksum.elf from checksum.c (the prebuilt ELF beside it was made with this command
# and Debian 12's gcc-riscv64-unknown-elf 12.2.0).
set -e
cd "$(dirname "$0")"
riscv64-unknown-elf-gcc -march=rv32im -mabi=ilp32 -O2 -ffreestanding -nostdlib -static \
    -fno-tree-loop-distribute-patterns -o checksum.elf checksum.c
