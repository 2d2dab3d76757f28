#!/usr/bin/env bash
# Where a learned crowd character's update goes (docs/benchmarks.md#why-3x-is-out-of-reach): `perf`
# samples of lmm-bench crowd on one thread, the samples under LearnedCrowd's update functions split into parts (batched networks,
# libm calls, steering, decoded pose, root motion, forward kinematics, copies, the rest). Then how
# often this machine's libm atan2f / sinf / cosf / expf differ from the correctly rounded value
# (10 million seeded arguments each): why the libm calls cannot move into lanes bit for bit.
#
# Usage: scripts/profile-crowd.sh MODEL.lmmw [CHARACTERS]   (default 1024)
# Needs: perf (Debian: linux-perf) allowed to sample this user's processes, python3, g++.
# Environment: LMM_BUILD (default build/release, configured with -DLMM_BUILD_BENCH=ON).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
model="${1:?usage: scripts/profile-crowd.sh MODEL.lmmw [CHARACTERS]}"
characters="${2:-1024}"
bench="${LMM_BUILD:-build/release}/tools/lmm-bench"
[[ -x "$bench" ]] || { echo "profile-crowd.sh: $bench not built (see the usage above)" >&2; exit 1; }
[[ -f "$model" ]] || { echo "profile-crowd.sh: no model file '$model'" >&2; exit 1; }
command -v perf >/dev/null || { echo "profile-crowd.sh: perf is not installed (Debian: linux-perf)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "profiling lmm-bench crowd --model $model --characters $characters --threads 1 ..."
perf record -q -F 4000 --call-graph dwarf,32768 -o "$work/perf.data" -- \
  "$bench" crowd --model "$model" --characters "$characters" --threads 1 --repetitions 3 >/dev/null
perf script -i "$work/perf.data" -F ip,sym 2>/dev/null >"$work/stacks.txt"
python3 - "$work/stacks.txt" <<'EOF'
import collections, sys
LIBM = ('atan', 'sincos', 'expf', 'v2df_to_sf', 'reduce_fast', 'sinf', 'cosf')
PARTS = (('_batch', 'batched networks'), ('begin_frame', 'steering and trajectory arithmetic'),
         ('finish_advance', 'decoded pose (6D conversion, positions)'),
         ('integrate_root', 'root motion arithmetic'), ('move_root', 'root motion arithmetic'),
         ('forward_kinematics', 'forward kinematics'))
shares, networks, total = collections.Counter(), collections.Counter(), 0
for stack in open(sys.argv[1]).read().split('\n\n'):
    frames = [l.strip().split(' ', 1)[-1] for l in stack.strip().split('\n') if l.strip()]
    if not any('LearnedCrowd::' in f for f in frames): continue
    if any('LearnedCrowd::init' in f or '~LearnedCrowd' in f for f in frames): continue
    total += 1
    joined = ' '.join(frames)
    part = next((name for key, name in PARTS[:1] if key in joined), None)
    if part is not None:
        networks[next(f.split('(')[0].split('::')[-1] for f in frames if '_batch' in f)] += 1
    if part is None and any(k in frames[0] for k in LIBM): part = 'libm calls (atan2f, sincosf, expf)'
    if part is None: part = next((name for key, name in PARTS[1:] if key in joined), None)
    if part is None and ('memcpy' in frames[0] or 'memmove' in frames[0]): part = 'row copies'
    shares[part or 'the rest'] += 1
if total == 0: sys.exit('profile-crowd.sh: no samples under LearnedCrowd (perf without call graphs?)')
print(f'{total} samples of the crowd update:')
for part, n in shares.most_common():
    print(f'  {100.0 * n / total:5.1f}%  {part}')
    if part != 'batched networks': continue
    for call, m in networks.most_common(): print(f'           {100.0 * m / total:5.1f}%  {call}')
EOF

cat >"$work/rounding.cpp" <<'EOF'
#include <cmath>
#include <cstdio>
#include <random>
// How often libm's float functions differ from the double result rounded to float.
int main() {
  std::mt19937 g(1);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const long n = 10000000;
  long atan2_off = 0, sin_off = 0, cos_off = 0, exp_off = 0;
  for (long i = 0; i < n; ++i) {
    const float y = unit(g), x = unit(g), a = 4.0f * unit(g);
    atan2_off += std::atan2(y, x) != float(std::atan2(double(y), double(x)));
    sin_off += std::sin(a) != float(std::sin(double(a)));
    cos_off += std::cos(a) != float(std::cos(double(a)));
    exp_off += std::exp(a) != float(std::exp(double(a)));
  }
  std::printf("libm results that are not the correctly rounded value, of %ld arguments each:\n", n);
  std::printf("  atan2f on [-1, 1]^2: %.2f%%\n  sinf on [-4, 4]: %.2f%%\n  cosf on [-4, 4]: %.2f%%\n  expf on [-4, 4]: %.2f%%\n",
              100.0 * atan2_off / n, 100.0 * sin_off / n, 100.0 * cos_off / n, 100.0 * exp_off / n);
}
EOF
g++ -O2 -o "$work/rounding" "$work/rounding.cpp"
"$work/rounding"
