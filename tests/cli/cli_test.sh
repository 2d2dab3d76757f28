#!/usr/bin/env bash
# CLI tests of lmm-import / lmm-inspect, run by ctest: cli_test.sh CASE TOOLS_DIR CONFIG_DIR.
# Cases that need the Bandai data read $LMM_DATA; without it they fail in CI (CI set) and
# are skipped (exit 77) elsewhere.
set -uo pipefail
case_name="$1"
LMM_DATA="${LMM_DATA:-${LMM_DATA_FALLBACK:-}}"
tools="$2"
configs="$3"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
# Runs a command, keeping its exit status in $rc and its output in $work/log.
run() { "$@" >"$work/log" 2>&1; rc=$?; }
expect_rc() { [[ $rc -eq $1 ]] || { cat "$work/log" >&2; fail "exit status $rc, expected $1"; }; }
expect_out() { grep -q -- "$1" "$work/log" || { cat "$work/log" >&2; fail "output lacks '$1'"; }; }
# Value of a top-level numeric JSON key.
json_number() { grep -o "\"$2\": [-0-9.e]*" "$1" | head -n 1 | sed 's/.*: //'; }

need_data() {
  if [[ -z "${LMM_DATA:-}" || ! -d "${LMM_DATA}/normal-extra" ]]; then
    [[ -n "${CI:-}" ]] && fail "LMM_DATA does not point at the bandai-loco data"
    echo "skipped: set LMM_DATA to the bandai-loco folder"
    exit 77
  fi
}

case "$case_name" in
  usage)
    run "$tools/lmm-import" --help; expect_rc 0; expect_out "--skip-bad"; expect_out "--no-mirror"
    run "$tools/lmm-inspect" --help; expect_rc 0; expect_out "--json"
    run "$tools/lmm-import" --out "$work/x.mmdb"; expect_rc 2; expect_out "need input"
    run "$tools/lmm-import" "$work" --out "$work/x.mmdb" --bogus; expect_rc 2; expect_out "bogus"
    run "$tools/lmm-import" "$work/missing" --out "$work/x.mmdb"; expect_rc 1; expect_out "missing"
    ;;
  import_inspect_json)
    need_data
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/x.mmdb" --json "$work/import.json"
    expect_rc 0
    for key in frames clips seconds_wall; do
      [[ -n "$(json_number "$work/import.json" "$key")" ]] || fail "import JSON lacks $key"
    done
    [[ "$(json_number "$work/import.json" clips)" == 14 ]] || fail "7 files should give 14 clips"
    run "$tools/lmm-inspect" "$work/x.mmdb" --json "$work/inspect.json"; expect_rc 0
    expect_out "left_foot_position"
    for key in frames clips joints fps feature_dims; do
      [[ -n "$(json_number "$work/inspect.json" "$key")" ]] || fail "inspect JSON lacks $key"
    done
    [[ "$(json_number "$work/inspect.json" frames)" == "$(json_number "$work/import.json" frames)" ]] ||
      fail "inspect and import disagree on the frame count"
    [[ "$(json_number "$work/inspect.json" feature_dims)" == 27 ]] || fail "default schema should have 27 dims"
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/y.mmdb" --no-mirror --fps 30 \
      --features "$configs/features/lipschitz31.toml" --json "$work/y.json"
    expect_rc 0
    [[ "$(json_number "$work/y.json" feature_dims)" == 31 ]] || fail "lipschitz31 should have 31 dims"
    [[ "$(json_number "$work/y.json" clips)" == 7 ]] || fail "--no-mirror should give 7 clips"
    [[ "$(json_number "$work/y.json" frames)" == 571 ]] || fail "30 Hz, unmirrored: 571 frames"
    ;;
  bad_inputs)
    need_data
    mkdir -p "$work/in"
    cp "$LMM_DATA"/normal-extra/dataset-1_walk_normal_00*.bvh "$work/in/"
    head -c 20000 "$LMM_DATA/normal-extra/dataset-1_run_normal_001.bvh" >"$work/in/truncated.bvh"
    run "$tools/lmm-import" "$work/in" --out "$work/bad.mmdb"; expect_rc 1
    expect_out "truncated.bvh"; expect_out "--skip-bad"
    ! compgen -G "$work/bad.mmdb*" >/dev/null || fail "a partial database was written: $(ls "$work")"
    run "$tools/lmm-import" "$work/in" --out "$work/bad.mmdb" --skip-bad --json "$work/s.json"
    expect_rc 0; expect_out "skipping"
    [[ "$(json_number "$work/s.json" skipped_files)" == 1 ]] || fail "one file should be skipped"
    head -c 5000 "$work/bad.mmdb" >"$work/cut.mmdb"
    run "$tools/lmm-inspect" "$work/cut.mmdb"; expect_rc 1; expect_out "cut.mmdb"; expect_out "truncated"
    printf 'name = "x"\nunit_scale = 0.01\n[roles]\nhips = "Hips"\n[simulation]\nfacing_left = ["Nope_L"]\nfacing_right = ["UpperLeg_R"]\n' >"$work/s.toml"
    run "$tools/lmm-import" "$work/in" --skip-bad --out "$work/z.mmdb" --skeleton "$work/s.toml"
    expect_rc 1; expect_out "'Nope_L'"; expect_out "available joints"
    # Issue 12: a frame time outside [0.0001, 1] s is a bad file like any other (100000 aborted
    # lmm-import from a worker thread even with --skip-bad; 1e-30 crashed the Gaussian filter).
    mkdir -p "$work/ft"
    cp "$LMM_DATA"/normal-extra/dataset-1_walk_normal_00*.bvh "$work/ft/"
    for frame_time in 100000 1e-30; do
      sed "s/^Frame Time:.*/Frame Time: $frame_time/" "$LMM_DATA/normal-extra/dataset-1_run_normal_001.bvh" >"$work/ft/a_bad.bvh"
      run "$tools/lmm-import" "$work/ft" --out "$work/ft.mmdb"; expect_rc 1
      expect_out "a_bad.bvh:[0-9]*: frame time '$frame_time' is outside \[0.0001, 1\]"
      [[ ! -e "$work/ft.mmdb" ]] || fail "a database was written although a_bad.bvh is bad"
      run "$tools/lmm-import" "$work/ft" --out "$work/ft.mmdb" --skip-bad --json "$work/ft.json"
      expect_rc 0; expect_out "skipping .*a_bad.bvh"
      [[ "$(json_number "$work/ft.json" skipped_files)" == 1 ]] || fail "a_bad.bvh should be skipped"
      rm -f "$work/ft.mmdb"
    done
    # Smoothing of 1e8 s crashed the Gaussian filter; it is now a config error naming the key.
    sed 's/^position_smoothing.*/position_smoothing = 1e8/' "$configs/skeletons/bandai.toml" >"$work/smooth.toml"
    run "$tools/lmm-import" "$work/ft" --skip-bad --out "$work/s.mmdb" --skeleton "$work/smooth.toml"
    expect_rc 1; expect_out "smooth.toml \[simulation\]: 'position_smoothing' = 1e+08 is outside \[0, 10\] s"
    [[ ! -e "$work/s.mmdb" ]] || fail "a database was written with a bad config"
    ;;
  import_checks)
    # Issue 14: a wrong config or mixed units no longer import silently.
    need_data
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/x.mmdb" --json "$work/x.json"; expect_rc 0
    expect_out "skeleton height: rest"; expect_out "contacts of Toes_L"
    ! grep -q "warning" "$work/log" || { cat "$work/log" >&2; fail "the Bandai data should import without a warning"; }
    run "$tools/lmm-inspect" "$work/x.mmdb" --json "$work/i.json"; expect_rc 0; expect_out "height       rest"
    for key in rest_height_m standing_height_m; do
      [[ -n "$(json_number "$work/x.json" "$key")" ]] || fail "import JSON lacks $key"
      [[ "$(json_number "$work/i.json" "$key")" == "$(json_number "$work/x.json" "$key")" ]] ||
        fail "lmm-inspect and lmm-import disagree on $key"
    done
    # Read as millimetres: a height warning naming the value, the range and the keys to change,
    # unless the config expects a character of that size.
    sed 's/^unit_scale = 0.01 /unit_scale = 0.001 /' "$configs/skeletons/bandai.toml" >"$work/mm.toml"
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/mm.mmdb" --skeleton "$work/mm.toml"; expect_rc 0
    expect_out "warning.*skeleton height: rest 0.1.* expected within \[1, 2.5\] m: check unit_scale = 0.001 in .*mm.toml, or set \[checks\] height_range"
    printf '\n[checks]\nheight_range = [0.1, 0.2]\n' >>"$work/mm.toml"
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/mm.mmdb" --skeleton "$work/mm.toml"; expect_rc 0
    ! grep -q "skeleton height: .*expected within" "$work/log" || fail "height_range should silence the height warning"
    # A mirror pattern that matches no joint name.
    sed 's/^patterns = .*/patterns = [["Left", "Right"]]/' "$configs/skeletons/bandai.toml" >"$work/lr.toml"
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/lr.mmdb" --skeleton "$work/lr.toml"; expect_rc 1
    expect_out 'lr.toml \[mirror\]: pattern \["Left", "Right"\] pairs no joints'
    # A file in metres among files in centimetres is a bad file naming both files.
    mkdir -p "$work/mixed"
    cp "$LMM_DATA"/normal-extra/dataset-1_walk_normal_00*.bvh "$work/mixed/"
    awk '$1 == "OFFSET" { print "OFFSET", $2 / 100, $3 / 100, $4 / 100; next } { print }' \
      "$LMM_DATA/normal-extra/dataset-1_run_normal_001.bvh" >"$work/mixed/z_metres.bvh"
    run "$tools/lmm-import" "$work/mixed" --out "$work/mixed.mmdb"; expect_rc 1
    expect_out "z_metres.bvh: skeleton differs from .*dataset-1_walk_normal_00.*joint '"
    run "$tools/lmm-import" "$work/mixed" --out "$work/mixed.mmdb" --skip-bad; expect_rc 0; expect_out "skipping .*z_metres.bvh"
    ;;
  controller)
    need_data
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/x.mmdb"; expect_rc 0
    run "$tools/lmm-inspect" "$work/x.mmdb" --json "$work/inspect.json"; expect_rc 0
    expect_out "speeds .*measured from the database"
    grep -q '"run_forward"' "$work/inspect.json" || fail "inspect JSON lacks the speeds"
    run "$tools/lmm-sim" --db "$work/x.mmdb" --random --seconds 2; expect_rc 0
    expect_out "controller speeds: .*measured from the database"
    run "$tools/lmm-sim" --db "$work/x.mmdb" --random --seconds 2 --controller "$configs/controllers/fixed-0.2.toml"
    expect_rc 0; expect_out "controller speeds: walk 1.20 / 1.00 / 0.90, run 2.80 / 2.20 / 1.80"
    expect_out "fixed-0.2.toml"
    printf '[speeds]\nrun_forward = 0\n' >"$work/bad.toml"
    run "$tools/lmm-sim" --db "$work/x.mmdb" --random --seconds 2 --controller "$work/bad.toml"; expect_rc 1
    expect_out "bad.toml:2: \[speeds\]: 'run_forward' = 0 is outside"
    run "$tools/lmm-path" --db "$work/x.mmdb" --test-path s-curve --controller "$work/bad.toml"; expect_rc 1
    expect_out "'run_forward' = 0 is outside"
    ;;
  second_skeleton)
    # Bring your own mocap: a synthetic rig with other joint names, millimetres, 120 fps and toes
    # 20 mm up (tests/support/synthetic_rig.hpp: walks at 0.8-1.3 m/s, runs at 2.8-3.0 m/s, feet
    # planted 60% / 38% of a step cycle, a stand) through import, inspect, sim, re-import of the
    # sim's BVH, path, and with training built: train tiny, export, eval.
    mkdir -p "$work/rig" && "$LMM_MAKE_RIG" "$work/rig" || fail "cannot write the synthetic rig"
    run "$tools/lmm-import" "$work/rig" --skeleton "$work/rig/rig.toml" --out "$work/rig.mmdb" --json "$work/import.json"
    expect_rc 0
    grep -q "warn" "$work/log" && { cat "$work/log" >&2; fail "the rig imports with a warning"; }
    ratio=$(json_number "$work/import.json" contact_ratio)
    awk -v r="$ratio" 'BEGIN { exit !(r >= 0.45 && r <= 0.65) }' || fail "contact ratio $ratio, expected 0.45-0.65 (stances)"
    # Standing: pelvis 850 + spine 120 + neck 400 + head 120 mm; rest: foot to head along the bones.
    awk -v h="$(json_number "$work/import.json" standing_height_m)" 'BEGIN { exit !(h > 1.48 && h < 1.50) }' ||
      fail "standing height $(json_number "$work/import.json" standing_height_m) m, expected 1.49"
    awk -v h="$(json_number "$work/import.json" rest_height_m)" 'BEGIN { exit !(h > 1.58 && h < 1.60) }' ||
      fail "rest height $(json_number "$work/import.json" rest_height_m) m, expected 1.59"
    run "$tools/lmm-inspect" "$work/rig.mmdb"; expect_rc 0
    # Walk = median forward speed (1.3 m/s clip), run = its 90th percentile (3.0 m/s clip).
    expect_out "speeds       walk 1.30 / 1.08 / 0.97, run 3.00 / 2.36 / 1.93 m/s"
    run "$tools/lmm-sim" --db "$work/rig.mmdb" --random --seconds 20 --out "$work/sim" --json "$work/sim.json"
    expect_rc 0; expect_out "controller speeds: walk 1.30"
    [[ "$(json_number "$work/sim.json" nan_frames)" == 0 ]] || fail "NaN frames on the rig"
    [[ "$(json_number "$work/sim.json" still_frames)" == 0 ]] || fail "still frames with the stick held on the rig"
    run "$tools/lmm-import" "$work/sim" --skeleton "$work/rig/rig.toml" --no-mirror --out "$work/again.mmdb" \
      --json "$work/again.json"
    expect_rc 0
    awk -v h="$(json_number "$work/again.json" rest_height_m)" 'BEGIN { exit !(h > 1.58 && h < 1.60) }' ||
      fail "the sim's BVH re-imports at rest height $(json_number "$work/again.json" rest_height_m) m"
    run "$tools/lmm-path" --db "$work/rig.mmdb" --test-path s-curve --json "$work/path.json"; expect_rc 0
    grep -q '"completed": true' "$work/path.json" || fail "the rig did not complete the s-curve"
    awk -v d="$(json_number "$work/path.json" avg_distance_m)" 'BEGIN { exit !(d < 0.15) }' ||
      fail "the rig follows the s-curve at $(json_number "$work/path.json" avg_distance_m) m, target 0.15"
    if [[ -x "$tools/lmm-train" ]]; then
      for model in autoencoder stepper projector; do
        run "$tools/lmm-train" "$model" --db "$work/rig.mmdb" --config tiny --out "$work/t"; expect_rc 0
      done
      run "$tools/lmm-export" --in "$work/t" --out "$work/rig.lmmw" --with-encoder; expect_rc 0
      run "$tools/lmm-inspect" "$work/rig.lmmw"; expect_rc 0
      expect_out "speeds       walk 1.30 / 1.08 / 0.97, run 3.00 / 2.36 / 1.93 m/s.*measured from the bundle"
      run "$tools/lmm-eval" --db "$work/rig.mmdb" --model "$work/rig.lmmw" --starts 50 --queries 50 --scripts 1 \
        --seconds 10 --json "$work/eval.json"
      expect_rc 0
      for key in decoder_mean_cm foot_slide_cm_per_s database_foot_slide_cm_per_s; do
        awk -v v="$(json_number "$work/eval.json" "$key")" 'BEGIN { exit !(v == v + 0 && v >= 0) }' ||
          fail "eval $key is not a number"
      done
      run "$tools/lmm-sim" --model "$work/rig.lmmw" --random --seconds 10 --json "$work/learned.json"
      expect_rc 0; expect_out "controller speeds: walk 1.30"
      [[ "$(json_number "$work/learned.json" nan_frames)" == 0 ]] || fail "NaN frames of the learned rig"
    fi
    ;;
  speeds)
    # Issue 40, item 1: one rule for controller speeds. Data of one run clip used to import, then be
    # refused by lmm-inspect / lmm-sim ("a walk speed exceeds its run speed"); data without
    # locomotion gave a character that never moved, without a word.
    need_data
    mkdir -p "$work/run" "$work/still"
    cp "$LMM_DATA/normal/dataset-2_run_normal_001.bvh" "$work/run/"
    run "$tools/lmm-import" "$work/run" --out "$work/run.mmdb"; expect_rc 0
    run "$tools/lmm-inspect" "$work/run.mmdb"; expect_rc 0
    expect_out "too few side and back frames"; expect_out "--controller FILE"
    run "$tools/lmm-sim" --db "$work/run.mmdb" --random --seconds 2; expect_rc 0
    expect_out "too few side and back frames"
    run "$tools/lmm-path" --db "$work/run.mmdb" --test-path s-curve; expect_rc 0
    # A bow (bandai-actions, beside bandai-loco): no frame moves forward, no stick can move a character.
    bow="$LMM_DATA/../bandai-actions/dataset-1_bow_normal_001.bvh"
    [[ -f "$bow" ]] || fail "no $bow (the bandai-actions folder beside the bandai-loco data)"
    cp "$bow" "$work/still/"
    run "$tools/lmm-import" "$work/still" --out "$work/still.mmdb"; expect_rc 0; expect_out "cannot follow a stick"
    run "$tools/lmm-sim" --db "$work/still.mmdb" --random --seconds 2; expect_rc 0
    expect_out "cannot follow a stick"
    run "$tools/lmm-path" --db "$work/still.mmdb" --test-path s-curve; expect_rc 0
    expect_out "cannot follow a stick"
    # Controller configs and input files are regular files (issue 40, item 8).
    for bad in /dev/null /dev/zero "$work"; do
      run "$tools/lmm-sim" --db "$work/run.mmdb" --random --seconds 2 --controller "$bad"; expect_rc 1
      expect_out "$bad: is \(not a regular file\|a directory\)"
      run "$tools/lmm-sim" --db "$work/run.mmdb" --input "$bad" --seconds 2; expect_rc 1
      expect_out "$bad: is \(not a regular file\|a directory\)"
    done
    run "$tools/lmm-import" /dev/zero --out "$work/zero.mmdb"; expect_rc 1
    expect_out "/dev/zero: is not a regular file or a folder"
    run "$tools/lmm-sim" --db "$work/run.mmdb" --random --seconds 1e-9; expect_rc 1
    expect_out "no whole frame"
    ;;
  foreign_rigs)
    # Issue 40, item 7: foreign rigs that imported silently with exit 0. Two clips of the
    # second_skeleton rig (tests/support/synthetic_rig.hpp) as they are, in a Z-up world, and with a
    # T-pose frame before each take; its config without [contacts]; lmm-sim's output re-imported
    # with a config that does not collapse 'Simulation'.
    clips=walk_straight,run_arc
    mkdir -p "$work/y" "$work/z" "$work/t"
    "$LMM_MAKE_RIG" "$work/y" --clips $clips && "$LMM_MAKE_RIG" "$work/z" --z-up --clips $clips &&
      "$LMM_MAKE_RIG" "$work/t" --t-pose --clips $clips || fail "cannot write the synthetic rigs"
    rig="$work/y/rig.toml"
    run "$tools/lmm-import" "$work/y" --skeleton "$rig" --out "$work/y.mmdb" --json "$work/y.json"; expect_rc 0
    ! grep -q "warn" "$work/log" || { cat "$work/log" >&2; fail "the Y-up rig imports with a warning"; }
    # Z-up read as Y-up: a warning naming the up axis before anything else (the import may then
    # fail on features that do not vary), none blaming unit_scale.
    run "$tools/lmm-import" "$work/z" --skeleton "$rig" --out "$work/wrong.mmdb"
    expect_out "warning.*up axis: .*run_arc.bvh: the files look Z-up .*set up_axis = \"z\" .*--up-axis z"
    ! grep -q "check unit_scale" "$work/log" || { cat "$work/log" >&2; fail "the Z-up warning blames unit_scale"; }
    # --up-axis z, or up_axis = "z" in the config: the heights and contacts of the Y-up rig, no warning.
    { echo 'up_axis = "z"'; cat "$rig"; } >"$work/z.toml"
    for skeleton in "$rig --up-axis z" "$work/z.toml"; do
      run "$tools/lmm-import" "$work/z" --skeleton $skeleton --out "$work/z.mmdb" --json "$work/z.json"; expect_rc 0
      ! grep -q "warn" "$work/log" || { cat "$work/log" >&2; fail "the Z-up rig imports with a warning ($skeleton)"; }
      for key in frames standing_height_m rest_height_m contact_ratio; do
        awk -v a="$(json_number "$work/z.json" $key)" -v b="$(json_number "$work/y.json" $key)" \
          'BEGIN { d = a - b; exit !(a != "" && d < 1e-3 && d > -1e-3) }' ||
          fail "Z-up rig ($skeleton): $key $(json_number "$work/z.json" $key), Y-up $(json_number "$work/y.json" $key)"
      done
    done
    run "$tools/lmm-import" "$work/z" --skeleton "$rig" --up-axis x --out "$work/x.mmdb"; expect_rc 1
    expect_out "--up-axis: 'x' is not y or z"
    # A T-pose before each take: dropped with a warning naming the file, leaving the take.
    run "$tools/lmm-import" "$work/t" --skeleton "$rig" --out "$work/t.mmdb" --json "$work/t.json"; expect_rc 0
    for clip in walk_straight run_arc; do
      expect_out "warning.*$clip.bvh: dropped the first 1 frame, a pose before the take (a T-pose?): joint '.*' moves at"
    done
    [[ "$(json_number "$work/t.json" frames)" == "$(json_number "$work/y.json" frames)" ]] ||
      fail "with the T-pose dropped, $(json_number "$work/t.json" frames) frames, expected $(json_number "$work/y.json" frames)"
    # No [contacts]: a warning that nothing is labelled; lmm-sim --foot-lock refuses such a database.
    sed '/^\[contacts\]/,$d' "$rig" >"$work/nocontacts.toml"
    run "$tools/lmm-import" "$work/y" --skeleton "$work/nocontacts.toml" --out "$work/nc.mmdb"; expect_rc 0
    expect_out "warning.*no contact labels: .*nocontacts.toml has no \[contacts\] joints.*--foot-lock"
    run "$tools/lmm-sim" --db "$work/nc.mmdb" --random --seconds 1 --foot-lock; expect_rc 1
    expect_out "nc.mmdb: --foot-lock needs contact labels"
    # lmm-sim's BVH (root 'Simulation') re-imports with one simulation bone, not two.
    run "$tools/lmm-sim" --db "$work/y.mmdb" --random --seconds 2 --out "$work/sim"; expect_rc 0
    run "$tools/lmm-import" "$work/sim" --skeleton "$rig" --no-mirror --out "$work/again.mmdb" --json "$work/again.json"
    expect_rc 0
    [[ "$(json_number "$work/again.json" joints)" == "$(json_number "$work/y.json" joints)" ]] ||
      fail "lmm-sim's BVH re-imports with $(json_number "$work/again.json" joints) joints, the rig has $(json_number "$work/y.json" joints)"
    ;;
  sim)
    need_data
    run "$tools/lmm-sim" --help; expect_rc 0; expect_out "--foot-lock"
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/db.mmdb" --json "$work/db.json"; expect_rc 0
    run "$tools/lmm-sim" --db "$work/db.mmdb"; expect_rc 2; expect_out "exactly one of"
    run "$tools/lmm-sim" --db "$work/db.mmdb" --model "$work/db.mmdb" --random; expect_rc 2; expect_out "exactly one of"
    run "$tools/lmm-sim" --db "$work/db.mmdb" --random --seconds 5 --dt 0 --out "$work/simout" --json "$work/sim.json"
    expect_rc 0; expect_out "--dt 0 is outside"
    for key in searches transitions foot_slide_cm_per_s foot_ik_error_max_cm foot_ik_error_mean_cm leg_joint_speed_max_m_s \
               jitter trajectory_error_m us_per_update; do
      [[ -n "$(json_number "$work/sim.json" "$key")" ]] || fail "sim JSON lacks $key"
    done
    [[ "$(json_number "$work/sim.json" foot_ik_error_max_cm)" == 0 ]] || fail "an IK error without foot locks"
    # With foot locks the legs reach the locked feet (a lock out of their reach is dragged instead),
    # and the feet slide less than half as fast as without, over the same 20 s of random input.
    run "$tools/lmm-sim" --db "$work/db.mmdb" --random --seconds 20 --foot-lock --json "$work/locked.json"; expect_rc 0
    run "$tools/lmm-sim" --db "$work/db.mmdb" --random --seconds 20 --json "$work/free.json"; expect_rc 0
    python3 -c "import json,sys; d=json.load(open('$work/locked.json')); f=json.load(open('$work/free.json')); sys.exit(0 if d['foot_ik_error_max_cm'] < 0.1 and d['foot_slide_cm_per_s'] < 0.5 * f['foot_slide_cm_per_s'] and d['leg_joint_speed_max_m_s'] > 0 else 1)" ||
      fail "foot-lock leg figures: $(cat "$work/locked.json") against $(cat "$work/free.json")"
    [[ "$(json_number "$work/sim.json" nan_frames)" == 0 ]] || fail "NaN frames in the simulation"
    for f in motion.bvh motion.glb root.csv plot.svg; do [[ -s "$work/simout/$f" ]] || fail "missing $f"; done
    head -n 1 "$work/simout/root.csv" | grep -q "^t,character,x,z" || fail "root.csv header"
    grep -q "<svg" "$work/simout/plot.svg" || fail "plot.svg is not an SVG"
    # The BVH output re-imports (the Simulation root is collapsed by the Bandai config).
    run "$tools/lmm-import" "$work/simout/motion.bvh" --out "$work/again.mmdb" --no-mirror --fps 60 --json "$work/again.json"
    expect_rc 0
    [[ "$(json_number "$work/again.json" frames)" == 300 ]] || fail "re-imported BVH should have 300 frames"
    # So does the .glb beside it, to the same database, and lmm-inspect reads it.
    run "$tools/lmm-import" "$work/simout/motion.glb" --out "$work/again-glb.mmdb" --no-mirror --fps 60
    expect_rc 0; expect_out "motion.glb: glTF 2.0: metres and Y-up"
    run "$tools/lmm-inspect" "$work/again.mmdb" --compare "$work/again-glb.mmdb" --queries 100 --json "$work/compare.json"
    expect_rc 0
    python3 -c "import json,sys; d=json.load(open('$work/compare.json')); sys.exit(0 if d['max_position_mm'] < 1 and d['same_nearest'] == 100 else 1)" ||
      fail "the .glb output imports to another database: $(cat "$work/compare.json")"
    run "$tools/lmm-inspect" "$work/simout/motion.glb"; expect_rc 0; expect_out "300 frames at 60 Hz"
    # --mesh spindles adds a skinned mesh (the skeleton read back is the same); a bad value stops the run.
    grep -q JOINTS_0 "$work/simout/motion.glb" && fail "a mesh in motion.glb without --mesh"
    run "$tools/lmm-sim" --db "$work/db.mmdb" --random --seconds 2 --mesh spindles --out "$work/meshout"; expect_rc 0
    grep -q JOINTS_0 "$work/meshout/motion.glb" || fail "no skinned mesh in motion.glb with --mesh spindles"
    run "$tools/lmm-inspect" "$work/meshout/motion.glb"; expect_rc 0; expect_out "joints       22"
    run "$tools/lmm-sim" --db "$work/db.mmdb" --random --seconds 2 --mesh cubes --out "$work/badmesh"; expect_rc 1
    expect_out "--mesh: 'cubes' is not none, spindles or a .glb / .gltf file"
    [[ ! -e "$work/badmesh" ]] || fail "a bad --mesh wrote outputs"
    # --mesh FILE.glb: a character file's skinned mesh (here the one just written) goes into lmm-path's
    # motion.glb as it was; one without a mesh is refused by name before anything is written.
    run "$tools/lmm-path" --db "$work/db.mmdb" --test-path s-curve --mesh "$work/meshout/motion.glb" --out "$work/pathmesh"
    expect_rc 0
    grep -q JOINTS_0 "$work/pathmesh/motion.glb" || fail "no skinned mesh in lmm-path's motion.glb with --mesh FILE.glb"
    run "$tools/lmm-sim" --db "$work/db.mmdb" --random --seconds 2 --mesh "$work/simout/motion.glb" --out "$work/nomesh"
    expect_rc 1; expect_out "simout/motion.glb: no skinned mesh"
    [[ ! -e "$work/nomesh" ]] || fail "a --mesh file without a mesh wrote outputs"
    # lmm-import --convert glb --mesh spindles writes the mesh into each .glb; --mesh needs --convert glb.
    run "$tools/lmm-import" "$work/simout/motion.bvh" --convert glb --mesh spindles --out "$work/convmesh"; expect_rc 0
    grep -q JOINTS_0 "$work/convmesh/"*.glb || fail "no skinned mesh in lmm-import --convert glb --mesh spindles"
    run "$tools/lmm-import" "$work/simout/motion.bvh" --mesh spindles --out "$work/nodb.mmdb"; expect_rc 1
    expect_out "--mesh needs --convert glb"
    run "$tools/lmm-import" "$work/simout" --convert obj --out "$work/conv"; expect_rc 1; expect_out "is not glb or bvh"
    # Issue 14: BVH output in the source files' unit by default (--units file: the Bandai
    # config's centimetres), or in --units; either re-imports with a config of that unit, with
    # contacts labelled about as in the database (walking forward, the root not pulled).
    printf 'time,stick_x,stick_y,camera_deg,strafe,gait\n0,0,1,0,0,0\n' >"$work/forward.csv"
    sed 's/^unit_scale = .*/unit_scale = 1/' "$configs/skeletons/bandai.toml" >"$work/m.toml"
    for units in file m; do
      run "$tools/lmm-sim" --db "$work/db.mmdb" --input "$work/forward.csv" --seconds 5 --no-adjust --units "$units" \
        --out "$work/sim_$units"
      expect_rc 0; expect_out "$([[ $units == m ]] && echo 1 || echo 0.01) m per unit"
      skeleton="$configs/skeletons/bandai.toml"; [[ $units == m ]] && skeleton="$work/m.toml"
      run "$tools/lmm-import" "$work/sim_$units/motion.bvh" --skeleton "$skeleton" --out "$work/$units.mmdb" \
        --no-mirror --fps 60 --json "$work/$units.json"
      expect_rc 0
      awk -v a="$(json_number "$work/$units.json" contact_ratio)" -v d="$(json_number "$work/db.json" contact_ratio)" \
        'BEGIN { exit !(a > 0.5 * d) }' || fail "--units $units: re-imported contact ratio $(json_number "$work/$units.json" contact_ratio), database $(json_number "$work/db.json" contact_ratio)"
    done
    run "$tools/lmm-sim" --db "$work/db.mmdb" --random --seconds 1 --units furlong --out "$work/simf"
    expect_rc 1; expect_out "--units: 'furlong' is not file, m, cm, mm"
    printf 'time,stick_x,stick_y,camera_deg,strafe,gait\n0,0,1,0,0,0\n1,0,oops,0,0,0\n' >"$work/in.csv"
    run "$tools/lmm-sim" --db "$work/db.mmdb" --input "$work/in.csv" --seconds 2; expect_rc 1; expect_out "in.csv:3"
    printf 'time,stick_x,stick_y,camera_deg,strafe,gait\n0,nan,1,0,0,0\n' >"$work/nan.csv"
    run "$tools/lmm-sim" --db "$work/db.mmdb" --input "$work/nan.csv" --seconds 1 --json "$work/nan.json"
    expect_rc 0; expect_out "treated as zero"
    [[ "$(json_number "$work/nan.json" sanitized_inputs)" -gt 0 ]] || fail "NaN input not counted"
    # Issue 12: runs too long to record, and absurd character counts, are errors (the first ran
    # "-2147483648 frames" with exit 0).
    run "$tools/lmm-sim" --db "$work/db.mmdb" --random --dt 1e-7 --seconds 1000; expect_rc 1; expect_out "raise the time step"
    run "$tools/lmm-sim" --db "$work/db.mmdb" --random --characters 0; expect_rc 1; expect_out "--characters must be in"
    # A folder given as a file is named in the error (it was std::bad_alloc).
    run "$tools/lmm-sim" --db "$work" --random; expect_rc 1; expect_out "is a directory"
    # Bone-only schema: an error naming the schema (lmm-sim called back() on an empty vector).
    printf 'name = "bones-only"\n[[group]]\nname = "feet"\nkind = "bone_position"\nbones = ["left_foot", "right_foot"]\n' \
      >"$work/bones.toml"
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --features "$work/bones.toml" --out "$work/bones.mmdb"; expect_rc 0
    run "$tools/lmm-sim" --db "$work/bones.mmdb" --random --seconds 1; expect_rc 1; expect_out "no trajectory groups"
    ;;
  train)
    need_data
    [[ -x "$tools/lmm-train" ]] || { echo "skipped: built without training"; exit 77; }
    run "$tools/lmm-train" --help; expect_rc 0; expect_out "autoencoder | stepper | projector"
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/db.mmdb"; expect_rc 0
    run "$tools/lmm-train" stepper --db "$work/db.mmdb" --out "$work/t"; expect_rc 1; expect_out "autoencoder"
    run "$tools/lmm-train" dancer --db "$work/db.mmdb" --out "$work/t"; expect_rc 2; expect_out "unknown model"
    printf 'name = "x"\n[train]\nbatchsize = 3\n' >"$work/bad.toml"
    run "$tools/lmm-train" autoencoder --db "$work/db.mmdb" --config "$work/bad.toml" --out "$work/t"
    expect_rc 1; expect_out "unknown key 'batchsize'"
    for model in autoencoder stepper projector; do
      run "$tools/lmm-train" "$model" --db "$work/db.mmdb" --config tiny --out "$work/t" --json "$work/$model.json"
      expect_rc 0; expect_out "samples/s"
      for key in samples_per_s seconds_wall steps; do
        [[ -n "$(json_number "$work/$model.json" "$key")" ]] || fail "$model JSON lacks $key"
      done
    done
    for key in mean_joint_error_cm p95_joint_error_cm; do
      [[ -n "$(json_number "$work/autoencoder.json" "$key")" ]] || fail "autoencoder JSON lacks $key"
    done
    [[ -n "$(json_number "$work/stepper.json" rollout_error_cm_2s)" ]] || fail "stepper JSON lacks rollout_error_cm_2s"
    [[ -n "$(json_number "$work/projector.json" projector_feature_error)" ]] || fail "projector JSON lacks projector_feature_error"
    # --freeze-encoder is for the autoencoder with --resume; scripts/train-standard.sh's two phases end to end.
    run "$tools/lmm-train" stepper --db "$work/db.mmdb" --config tiny --out "$work/t" --resume --freeze-encoder
    expect_rc 2; expect_out "--freeze-encoder"
    run "$tools/lmm-train" autoencoder --db "$work/db.mmdb" --config tiny --out "$work/t" --freeze-encoder
    expect_rc 2; expect_out "--resume"
    LMM_DB="$work/db.mmdb" LMM_BUILD="$tools/.." run bash "$configs/../scripts/train-standard.sh" tiny "$work/ts"
    expect_rc 0; expect_out "projector: {"
    [[ -n "$(json_number "$work/ts/autoencoder-joint.json" mean_joint_error_cm)" ]] || fail "no phase-1 autoencoder JSON"
    grep -q "encoder frozen" "$work/ts/autoencoder.log" || fail "phase 2 did not train the decoder with the encoder frozen"
    # A phase-2 process that fails (a rollout longer than every clip) makes the script fail.
    sed 's/^rollout = 8$/rollout = 100000/' "$configs/training/tiny.toml" >"$work/no-rollout.toml"
    LMM_DB="$work/db.mmdb" LMM_BUILD="$tools/.." run bash "$configs/../scripts/train-standard.sh" \
      "$work/no-rollout.toml" "$work/ts2"
    expect_rc 1; expect_out "phase-2 training failed"
    grep -q "no clip is longer than the rollout" "$work/ts2/stepper.log" || fail "stepper.log does not say why it failed"
    # DirectionNet (issue 16): train with the longest walk held out, export, follow paths with it.
    cp "$configs/training/tiny.toml" "$work/direction.toml"
    printf 'holdout = ["walk_normal_001"]\n' >>"$work/direction.toml"  # tiny.toml ends with its [direction] table
    run "$tools/lmm-train" direction --db "$work/db.mmdb" --config "$work/direction.toml" --out "$work/dn" \
      --json "$work/direction.json"
    expect_rc 0; expect_out "training windows"
    for key in direction_error_deg_forward_net direction_error_deg_forward_tangent direction_samples_forward; do
      [[ -n "$(json_number "$work/direction.json" "$key")" ]] || fail "direction JSON lacks $key"
    done
    run "$tools/lmm-export" --in "$work/dn" --direction --out "$work/d.lmdn"; expect_rc 0; expect_out "DirectionNet"
    run "$tools/lmm-path" --db "$work/db.mmdb" --test-path sideways-shuffle --facing net --direction-net "$work/d.lmdn" \
      --json "$work/path-net.json"
    expect_rc 0; expect_out "DirectionNet predictions"
    (( $(json_number "$work/path-net.json" direction_calls) > 0 )) || fail "--facing net made no DirectionNet prediction"
    [[ -n "$(json_number "$work/path-net.json" facing_error_deg)" ]] || fail "path JSON lacks facing_error_deg"
    run "$tools/lmm-path" --db "$work/db.mmdb" --test-path s-curve --facing net; expect_rc 1; expect_out "--direction-net"
    run "$tools/lmm-path" --db "$work/db.mmdb" --test-path s-curve --facing net --facing-offset 30 \
      --direction-net "$work/d.lmdn"
    expect_rc 1; expect_out "--facing joystick"
    head -c 300 "$work/d.lmdn" >"$work/cut.lmdn"
    run "$tools/lmm-path" --db "$work/db.mmdb" --test-path s-curve --facing net --direction-net "$work/cut.lmdn"
    expect_rc 1; expect_out "$work/cut.lmdn"
    if [[ -x "$tools/lmm-bench" ]]; then
      run "$tools/lmm-bench" direction --model "$work/d.lmdn" --db "$work/db.mmdb" --calls 20 --repetitions 1 \
        --json "$work/bench-direction.json"
      expect_rc 0; expect_out "us per prediction"
      for key in us_per_call ms_per_lhmm ratio_to_lhmm; do
        [[ -n "$(json_number "$work/bench-direction.json" "$key")" ]] || fail "bench direction JSON lacks $key"
      done
    fi
    # Periodic autoencoder (issue 17): tiny's [phase] in two parts (--stop-after, then --resume); a bad [phase] value.
    run "$tools/lmm-train" phase --db "$work/db.mmdb" --config tiny --out "$work/pae" --stop-after 8
    expect_rc 0; expect_out "phase channels"; expect_out "continue with --resume"
    run "$tools/lmm-train" phase --db "$work/db.mmdb" --config tiny --out "$work/pae" --resume --json "$work/phase.json"
    expect_rc 0; expect_out "resumed phase at step 8"; expect_out "samples/s"
    for key in phase_reconstruction_error phase_dominant_frequency_hz phase_backward_share samples_per_s; do
      [[ -n "$(json_number "$work/phase.json" "$key")" ]] || fail "phase JSON lacks $key"
    done
    [[ "$(json_number "$work/phase.json" steps)" == 20 ]] || fail "phase: tiny's [phase] has 20 steps"
    [[ -f "$work/pae/phase.pt" ]] || fail "phase: no phase.pt in --out"
    cmp -s "$work/pae/preset.toml" "$configs/training/tiny.toml" || fail "phase: --out lacks the preset copy"
    # Its phases into a 41-dim database (Kleanthous & Martini 2023 Table 10), inspected and simulated.
    run "$tools/lmm-export" --in "$work/pae" --phase --db "$work/db.mmdb" --out "$work/phase41.mmdb" --json "$work/p41.json"
    expect_rc 0; expect_out "5 phase channels"
    [[ "$(json_number "$work/p41.json" feature_dims)" == 41 ]] || fail "lmm-export --phase: lipschitz41 has 41 dims"
    run "$tools/lmm-inspect" "$work/phase41.mmdb"; expect_rc 0; expect_out "phases"
    run "$tools/lmm-sim" --db "$work/phase41.mmdb" --random --seconds 2 --json "$work/sim41.json"; expect_rc 0
    run "$tools/lmm-export" --in "$work/pae" --phase --out "$work/x41.mmdb"; expect_rc 1; expect_out "need --db"
    [[ ! -e "$work/x41.mmdb" ]] || fail "lmm-export --phase wrote a file on error"
    printf 'name = "x"\n[phase]\nkernel = 4\n' >"$work/bad-phase.toml"
    run "$tools/lmm-train" phase --db "$work/db.mmdb" --config "$work/bad-phase.toml" --out "$work/bad-phase"
    expect_rc 1; expect_out "\[phase\]: 'kernel' must be an odd number"
    # lmm-export: the folder's checkpoints -> bundles; then lmm-bench nn times them.
    run "$tools/lmm-export" --help; expect_rc 0; expect_out "--with-encoder"
    run "$tools/lmm-export" --in "$work/none" --out "$work/x.lmmw"; expect_rc 1; expect_out "run.toml"
    [[ ! -e "$work/x.lmmw" ]] || fail "lmm-export left a file after an error"
    run "$tools/lmm-export" --in "$work/t" --out "$work/model.lmmw" --json "$work/export.json"
    expect_rc 0; expect_out "wrote"
    run "$tools/lmm-export" --in "$work/t" --out "$work/model-f16.lmmw" --half; expect_rc 0
    # One flipped bit in a checkpoint: lmm-export names the file and writes nothing.
    cp -r "$work/t" "$work/flipped"
    offset=$(( $(stat -c %s "$work/flipped/stepper.pt") / 2 ))
    byte=$(od -An -tu1 -j "$offset" -N 1 "$work/flipped/stepper.pt")
    printf "$(printf '\\%03o' $(( byte ^ 64 )))" | dd of="$work/flipped/stepper.pt" bs=1 seek="$offset" conv=notrunc status=none
    run "$tools/lmm-export" --in "$work/flipped" --out "$work/flipped.lmmw"; expect_rc 1
    expect_out "$work/flipped/stepper.pt is not an intact"
    [[ ! -e "$work/flipped.lmmw" ]] || fail "lmm-export wrote a bundle from a damaged checkpoint"
    # A folder named like a preset in the working directory does not replace the shipped preset.
    mkdir -p "$work/cwd/tiny"
    cd "$work/cwd" || fail "cannot enter $work/cwd"
    run "$tools/lmm-train" autoencoder --db "$work/db.mmdb" --config tiny --out "$work/p" --stop-after 1
    cd - >/dev/null || fail "cannot return from $work/cwd"
    expect_rc 0
    cmp -s "$work/p/preset.toml" "$configs/training/tiny.toml" || fail "--config tiny did not use configs/training/tiny.toml"
    f32_size=$(stat -c %s "$work/model.lmmw"); f16_size=$(stat -c %s "$work/model-f16.lmmw")
    (( f16_size < f32_size )) || fail "f16 bundle ($f16_size bytes) is not smaller than f32 ($f32_size)"
    run "$tools/lmm-inspect" "$work/model-f16.lmmw" --json "$work/inspect-model.json"
    expect_rc 0; expect_out "preset       tiny"; expect_out "f16 (gates f32)"; expect_out "decoder"
    [[ -n "$(json_number "$work/inspect-model.json" latent)" ]] || fail "inspect JSON lacks latent"
    [[ "$(json_number "$work/export.json" file_bytes)" == "$f32_size" ]] || fail "export JSON file_bytes"
    if [[ -x "$tools/lmm-bench" ]]; then
      run "$tools/lmm-bench" nn --model "$work/model.lmmw" --baseline "$work/model-f16.lmmw" --calls 50 --json "$work/nn.json"
      expect_rc 0; expect_out "us/call"
      run "$tools/lmm-bench" nn --model "$work/model.lmmw" --half "$work/model-f16.lmmw" --baseline "$work/model.lmmw" \
        --calls 50 --json "$work/nn-half.json"
      expect_rc 0; expect_out "f16 bundle:"
      [[ -n "$(json_number "$work/nn-half.json" f16_speedup_vs_ffn)" ]] || fail "nn --half JSON lacks f16_speedup_vs_ffn"
      run "$tools/lmm-bench" nn --preset tiny --db "$work/db.mmdb" --calls 50 --json "$work/nn-preset.json"
      expect_rc 0; expect_out "speedup vs baseline 'ffn-tiny'"
      for key in us_decoder us_stepper us_projector us_frame us_frame_batched_1024 weight_bytes ffn_us_frame speedup_vs_ffn \
          f16_file_bytes f16_us_frame f16_speedup_vs_ffn; do
        [[ -n "$(json_number "$work/nn-preset.json" "$key")" ]] || fail "nn JSON lacks $key"
      done
    fi
    if [[ -x "$tools/lmm-bench" ]]; then
      # lmm-bench crowd: timings with rate divisors, a database crowd, a bad --lod (the soak is the
      # GoogleTest CrowdSoak.*).
      run "$tools/lmm-bench" crowd --model "$work/model.lmmw" --characters 1,9 --frames 3 --repetitions 1 --lod 1,2 \
        --json "$work/crowd.json"
      expect_rc 0; expect_out "characters/ms"; expect_out "rate divisor 2 vs full rate"
      for key in chars_per_ms us_per_char ms_per_frame speedup_vs_individual cpu_us_per_char individual_cpu_us_per_char \
          joint_error_cm root_error_cm; do
        [[ -n "$(json_number "$work/crowd.json" "$key")" ]] || fail "crowd JSON lacks $key"
      done
      run "$tools/lmm-bench" crowd --db "$work/db.mmdb" --characters 5 --frames 3 --repetitions 1
      expect_rc 0; expect_out "speedup"
      run "$tools/lmm-bench" crowd --model "$work/model.lmmw" --lod 1,0; expect_rc 1; expect_out "--lod: values must be >= 1"
    fi
    # SIGINT: the run stops cleanly with a checkpoint that --resume continues.
    printf 'name = "long"\n[model]\nlatent = 4\nencoder_hidden = [16]\n[decoder]\nexperts = 2\nexpert_hidden = [8]\n[train]\nbatch = 16\nsteps = 10000000\n' >"$work/long.toml"
    "$tools/lmm-train" autoencoder --db "$work/db.mmdb" --config "$work/long.toml" --out "$work/sig" >"$work/log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do [[ -f "$work/sig/autoencoder.pt" ]] && break; grep -q "step" "$work/log" && break; sleep 0.1; done
    sleep 1
    kill -INT "$pid"
    wait "$pid"; rc=$?
    expect_rc 0; expect_out "continue with --resume"
    [[ -f "$work/sig/autoencoder.pt" ]] || fail "no checkpoint after SIGINT"
    run "$tools/lmm-train" autoencoder --db "$work/db.mmdb" --config "$work/long.toml" --out "$work/sig" --resume --stop-after 5
    expect_rc 0; expect_out "resumed autoencoder at step"
    saved=$(( $(grep -o "resumed autoencoder at step [0-9]*" "$work/log" | grep -o "[0-9]*$") + 5 ))
    # Disk full (a file size limit: writes past it fail with EFBIG): the run stops with a message
    # and a non-zero status, keeps the previous checkpoint and leaves no temporary file.
    limit_kb=$(( $(stat -c %s "$work/sig/autoencoder.pt") / 2048 ))
    (trap '' XFSZ; ulimit -f "$limit_kb"
     exec "$tools/lmm-train" autoencoder --db "$work/db.mmdb" --config "$work/long.toml" --out "$work/sig" --resume \
       --stop-after 5) >"$work/log" 2>&1
    rc=$?
    expect_rc 1; expect_out "autoencoder.pt"; expect_out "previous checkpoint (if any) is kept"
    ! compgen -G "$work/sig/*.tmp*" >/dev/null || fail "temporary files left: $(ls "$work/sig")"
    run "$tools/lmm-train" autoencoder --db "$work/db.mmdb" --config "$work/long.toml" --out "$work/sig" --resume --stop-after 1
    expect_rc 0; expect_out "resumed autoencoder at step $saved\b"
    ;;
  gate)
    # The whole pipeline on a small subset: import -> train tiny -> export -> eval -> sim, gated
    # by the committed thresholds (configs/eval/ci-gate.toml).
    need_data
    [[ -x "$tools/lmm-train" ]] || { echo "skipped: built without training"; exit 77; }
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/db.mmdb"; expect_rc 0
    for model in autoencoder stepper projector; do
      run "$tools/lmm-train" "$model" --db "$work/db.mmdb" --config tiny --out "$work/t"; expect_rc 0
    done
    run "$tools/lmm-export" --in "$work/t" --out "$work/model.lmmw" --with-encoder; expect_rc 0
    run "$tools/lmm-export" --in "$work/t" --out "$work/no-encoder.lmmw"; expect_rc 0
    run "$tools/lmm-eval" --help; expect_rc 0; expect_out "--thresholds"
    run "$tools/lmm-eval" --db "$work/db.mmdb" --model "$work/model.lmmw" --baseline "$work/model.lmmw" \
      --thresholds "$configs/eval/ci-gate.toml" --json "$work/eval.json" --svg "$work/eval.svg"
    cat "$work/log"
    expect_rc 0; expect_out "thresholds met"; expect_out "decoder_mean_cm"
    for key in decoder_mean_cm decoder_p95_cm rotation_deg stepper_cm_at_0.5s stepper_cm_at_1s stepper_cm_at_2s \
               stepper_cm_at_4s projector_feature_error foot_slide_cm_per_s jitter baseline_decoder_mean_cm; do
      [[ -n "$(json_number "$work/eval.json" "$key")" ]] || fail "eval JSON lacks $key"
    done
    # Expert use as multiples of uniform: their mean is 1, so the least used is at most 1 and the most at least 1.
    for net in decoder stepper projector; do
      least="$(json_number "$work/eval.json" ${net}_expert_use_min)" most="$(json_number "$work/eval.json" ${net}_expert_use_max)"
      awk -v a="$least" -v b="$most" 'BEGIN { exit !(a != "" && b != "" && a >= 0 && a <= 1 && b >= 1) }' ||
        fail "$net expert use: least $least, most $most (uniform = 1)"
    done
    grep -q "<polyline" "$work/eval.svg" || fail "eval.svg has no curve"
    printf 'time,stick_x,stick_y,camera_deg,strafe,gait\n0,0,1,0,0,0\n2,1,0,0,0,1\n4,0,0,0,0,0\n' >"$work/script.csv"
    run "$tools/lmm-eval" --db "$work/db.mmdb" --model "$work/model.lmmw" --input "$work/script.csv" --seconds 6 \
      --starts 20 --queries 20
    expect_rc 0; expect_out "1 input scripts x 6"
    printf '[max]\ndecoder_mean_cm = 0.001\n' >"$work/strict.toml"
    run "$tools/lmm-eval" --db "$work/db.mmdb" --model "$work/model.lmmw" --thresholds "$work/strict.toml" --scripts 1 --seconds 2
    expect_rc 3; expect_out "threshold crossed: decoder_mean_cm"
    printf '[max]\ndecoder_mean_cm = "low"\n' >"$work/bad.toml"
    run "$tools/lmm-eval" --db "$work/db.mmdb" --model "$work/model.lmmw" --thresholds "$work/bad.toml"
    expect_rc 1; expect_out "bad.toml: \\[max\\] decoder_mean_cm must be a number"
    run "$tools/lmm-eval" --db "$work/db.mmdb" --model "$work/no-encoder.lmmw"; expect_rc 1; expect_out "--with-encoder"
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/db30.mmdb" --fps 30; expect_rc 0
    run "$tools/lmm-eval" --db "$work/db30.mmdb" --model "$work/model.lmmw"; expect_rc 1
    expect_out "does not match the database"; expect_out "frame rate"
    # The learned controller gives every output of the database controller.
    run "$tools/lmm-sim" --model "$work/model.lmmw" --random --seconds 5 --out "$work/simout" --json "$work/sim.json"
    expect_rc 0
    for key in searches transitions foot_slide_cm_per_s jitter trajectory_error_m us_per_update nan_frames still_frames; do
      [[ -n "$(json_number "$work/sim.json" "$key")" ]] || fail "learned sim JSON lacks $key"
    done
    [[ "$(json_number "$work/sim.json" nan_frames)" == 0 ]] || fail "NaN frames in the learned simulation"
    for f in motion.bvh motion.glb root.csv plot.svg; do [[ -s "$work/simout/$f" ]] || fail "missing learned $f"; done
    printf 'time,stick_x,stick_y,camera_deg,strafe,gait\n0,nan,1,0,0,0\n' >"$work/nan.csv"
    run "$tools/lmm-sim" --model "$work/model.lmmw" --input "$work/nan.csv" --seconds 1 --json "$work/nan.json"
    expect_rc 0; expect_out "treated as zero"
    [[ "$(json_number "$work/nan.json" sanitized_inputs)" -gt 0 ]] || fail "NaN input not counted"
    [[ "$(json_number "$work/nan.json" nan_frames)" == 0 ]] || fail "NaN input reached the pose"
    run "$tools/lmm-sim" --model "$work/model.lmmw" --random --transition wobble; expect_rc 1; expect_out "--transition"
    ;;
  strafe)
    # Issue 16: strafe requests (facing held, stick left / right / back) are met by sideways and
    # backward clips. One style's sidesteps, backward walk and walk of Bandai's dataset-1
    # (bandai-d1-loco, the sibling of bandai-loco; its "sad" sidesteps travel sideways).
    need_data
    d1="${LMM_D1_DATA:-$LMM_DATA/../bandai-d1-loco}"
    if [[ ! -f "$d1/dataset-1_walk-left_sad_001.bvh" ]]; then
      [[ -n "${CI:-}" ]] && fail "no bandai-d1-loco next to LMM_DATA (or set LMM_D1_DATA)"
      echo "skipped: bandai-d1-loco is not next to LMM_DATA (set LMM_D1_DATA)"
      exit 77
    fi
    run "$tools/lmm-import" "$d1"/dataset-1_{walk-left,walk-right,walk-back,walk}_sad_001.bvh --out "$work/strafe.mmdb"
    expect_rc 0
    run "$tools/lmm-sim" --db "$work/strafe.mmdb" --random --random-strafe --seconds 30 --seed 1 --json "$work/strafe.json"
    expect_rc 0; expect_out "strafing frames played from sideways / backward clips"
    for key in strafe_facing_error_deg strafe_velocity_error_m_s strafe_speed_ratio strafe_clip_share \
               forward_facing_error_deg forward_velocity_error_m_s forward_speed_ratio; do
      awk -v v="$(json_number "$work/strafe.json" "$key")" 'BEGIN { exit !(v == v + 0 && v >= 0) }' ||
        fail "sim $key is not a finite number: '$(json_number "$work/strafe.json" "$key")'"
    done
    [[ "$(json_number "$work/strafe.json" strafe_frames)" -gt 600 ]] || fail "fewer than 600 strafing frames in 30 s"
    awk -v v="$(json_number "$work/strafe.json" strafe_clip_share)" 'BEGIN { exit !(v >= 0.8) }' ||
      fail "strafing played from sideways / backward clips $(json_number "$work/strafe.json" strafe_clip_share) of the time, expected >= 0.8"
    awk -v v="$(json_number "$work/strafe.json" strafe_facing_error_deg)" 'BEGIN { exit !(v <= 15) }' ||
      fail "strafing facing error $(json_number "$work/strafe.json" strafe_facing_error_deg) deg, target <= 15"
    awk -v v="$(json_number "$work/strafe.json" strafe_speed_ratio)" 'BEGIN { exit !(v >= 0.8 && v <= 1.2) }' ||
      fail "strafing speed $(json_number "$work/strafe.json" strafe_speed_ratio) x desired, target 0.8-1.2"
    grep -q '"travel": "side"' "$work/strafe.json" || fail "no sideways clip among strafe_clips"
    # Without sideways or backward clips the same requests are played from forward clips.
    run "$tools/lmm-import" "$d1/dataset-1_walk_sad_001.bvh" --out "$work/walk.mmdb"; expect_rc 0
    run "$tools/lmm-sim" --db "$work/walk.mmdb" --random --random-strafe --seconds 30 --seed 1 --json "$work/walk.json"
    expect_rc 0
    [[ "$(json_number "$work/walk.json" strafe_clip_share)" == 0 ]] || fail "a walk-only database played sideways clips"
    ;;
  path)
    need_data
    run "$tools/lmm-path" --help; expect_rc 0; expect_out "--ablation"
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/db.mmdb"; expect_rc 0
    run "$tools/lmm-path" --db "$work/db.mmdb"; expect_rc 2; expect_out "exactly one of"
    printf 't,x,z\n0,0,0\n' >"$work/one.csv"
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/one.csv"; expect_rc 1; expect_out "1 sample(s)"
    printf 't,x,z\n0,0,0\n1,0,1\n1,0,2\n' >"$work/repeat.csv"
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/repeat.csv"; expect_rc 1; expect_out "path sample 3: time"
    printf 't,x,z\n0,0,0\n1,nan,1\n' >"$work/nan.csv"
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/nan.csv"; expect_rc 1; expect_out "not a finite number"
    printf 't,x,z\n0,0,0\n1,oops,1\n' >"$work/bad.csv"
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/bad.csv"; expect_rc 1; expect_out "bad.csv:3"
    printf 't,x,z\n' >"$work/empty.csv"
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/empty.csv"; expect_rc 1; expect_out "0 sample(s)"
    # Issue 40 item 2: a path that never moves was followed for ever and printed "facing nan deg";
    # a pause (a repeated point) is waited out, then followed to the end.
    printf 't,x,z\n0,1,1\n1,1,1\n2,1,1\n' >"$work/still.csv"
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/still.csv"; expect_rc 1; expect_out "the path does not move"
    printf 't,x,z\n0,0,0\n1,0,1\n2,0,1\n3,0,2\n' >"$work/pause.csv"
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/pause.csv" --json "$work/pause.json"; expect_rc 0
    grep -q '"completed": true' "$work/pause.json" || fail "a path pausing 1 s was not completed"
    printf 't,x,z\n0,0,0\n10,0,2\n' >"$work/slow.csv"  # never faster than 0.3 m/s: no facing to measure
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/slow.csv"; expect_rc 0; expect_out "facing not measured"
    ! grep -qi "nan" "$work/log" || fail "lmm-path printed nan: $(cat "$work/log")"
    run "$tools/lmm-path" --db "$work/db.mmdb" --test-path s-curve --mode sideways; expect_rc 1; expect_out "--mode"
    # Issue 12: work and time limits (k 64, l 8 never returned; dt 1e-9 ran 0 frames with exit 0).
    run "$tools/lmm-path" --db "$work/db.mmdb" --test-path s-curve --k 64 --l 8; expect_rc 1; expect_out "searches per match"
    run "$tools/lmm-path" --db "$work/db.mmdb" --test-path s-curve --dt 1e-9; expect_rc 1; expect_out "raise the time step"
    printf 't,x,z\n0,0,0\n10000,0,5\n20000,0,10\n' >"$work/long.csv"
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/long.csv"; expect_rc 1; expect_out "at most 600 s"
    run "$tools/lmm-path" --db "$work/db.mmdb" --test-path s-curve --json "$work"; expect_rc 1; expect_out "is a directory"
    printf 't,x,z\n0,0,0\n1,0,1.2\n2,0.5,2.4\n3,1.5,3.2\n' >"$work/p.csv"
    printf '[[0, 0, 0], [2, 2, 0], [4, 3, 1]]' >"$work/p.json"
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/p.csv" --path "$work/p.json" --mode global \
      --out "$work/pathout" --json "$work/path.json"
    expect_rc 0; expect_out "character 1"
    for key in avg_distance_m ms_per_lhmm knn_calls_per_lhmm frames; do
      [[ -n "$(json_number "$work/path.json" "$key")" ]] || fail "path JSON lacks $key"
    done
    grep -q '"completed": ' "$work/path.json" || fail "path JSON lacks completed"
    [[ "$(json_number "$work/path.json" knn_calls_per_lhmm)" == 13 ]] || fail "LHMM(3,3) should make 13 kNN calls"
    for f in motion.bvh motion_1.bvh motion.glb motion_1.glb root.csv plot.svg plot_1.svg; do [[ -s "$work/pathout/$f" ]] || fail "missing $f"; done
    expect_out "0.01 m per unit"  # --units file: the Bandai config's centimetres
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/p.csv" --units mm --out "$work/pathmm"; expect_rc 0
    expect_out "0.001 m per unit"
    run "$tools/lmm-path" --db "$work/db.mmdb" --path "$work/p.csv" --units 0 --out "$work/path0"; expect_rc 1
    expect_out "--units: '0'"
    run "$tools/lmm-path" --db "$work/db.mmdb" --test-path s-curve --k 2 --l=2 --json "$work/k2.json"; expect_rc 0
    expect_out "LHMM(2, 2)"; [[ "$(json_number "$work/k2.json" knn_calls_per_lhmm)" == 3 ]] || fail "LHMM(2,2) should make 3 kNN calls"
    run "$tools/lmm-path" --db "$work/db.mmdb" --ablation --out "$work/ablation" --json "$work/ablation.json"
    expect_rc 0; expect_out "Table 2"; expect_out "raw future query"; expect_out "LHMM(10,3)"
    grep -q '"table2"' "$work/ablation.json" || fail "ablation JSON lacks table2"
    ls "$work/ablation"/*.svg >/dev/null || fail "ablation wrote no plots"
    ;;
  quickstart_tools)
    # Issue 14: scripts/quickstart.sh built no lmm-path. It must build every tool that
    # tools/CMakeLists.txt defines.
    source_dir="$configs/.."
    defined="$(grep -E 'foreach\(tool|add_executable\(lmm-' "$source_dir/tools/CMakeLists.txt" | grep -o 'lmm-[a-z]*' | sort -u)"
    [[ -n "$defined" ]] || fail "found no tools in tools/CMakeLists.txt"
    built="$(grep -E '^tools=\(' "$source_dir/scripts/quickstart.sh")"
    for tool in $defined; do
      [[ " ${built#tools=(} " == *" ${tool}"[\ \)]* ]] || fail "scripts/quickstart.sh does not build $tool ($built)"
    done
    ;;
  distributed)
    # Issue 19: data-parallel lmm-train over c10d (Gloo on loopback) and scripts/train-distributed.sh.
    need_data
    [[ -x "$tools/lmm-train" ]] || { echo "skipped: built without training"; exit 77; }
    launch="$configs/../scripts/train-distributed.sh"
    export LMM_TRAIN="$tools/lmm-train"
    run "$tools/lmm-import" "$LMM_DATA/normal-extra" --out "$work/db.mmdb"; expect_rc 0
    base=(--db "$work/db.mmdb" --config tiny --threads 1)
    run "$tools/lmm-train" autoencoder "${base[@]}" --out "$work/t" --world-size 0; expect_rc 2; expect_out "1.."
    run "$tools/lmm-train" autoencoder "${base[@]}" --out "$work/t" --world-size 2 --rank 2; expect_rc 2; expect_out "0..1"
    run "$tools/lmm-train" autoencoder "${base[@]}" --out "$work/t" --world-size 2 --rank 0 --master 127.0.0.1:70000
    expect_rc 2; expect_out "1..65535"
    WORLD_SIZE=2 RANK=5 run "$tools/lmm-train" autoencoder "${base[@]}" --out "$work/t"; expect_rc 2; expect_out "RANK"
    run "$tools/lmm-train" direction "${base[@]}" --out "$work/t" --world-size 2 --rank 0; expect_rc 2
    expect_out "one process"
    # Two ranks train, rank 0 alone reports and writes; --resume needs the same world size.
    run bash "$launch" 2 autoencoder "${base[@]}" --out "$work/dp" --stop-after 10 --json "$work/dp.json"
    expect_rc 0; expect_out "2 ranks met"
    [[ "$(json_number "$work/dp.json" steps)" == 10 ]] || fail "2 ranks should report 10 steps"
    run "$tools/lmm-train" autoencoder "${base[@]}" --out "$work/dp" --resume --stop-after 5; expect_rc 1
    expect_out "resume it with --world-size 2"
    run bash "$launch" 2 autoencoder "${base[@]}" --out "$work/dp" --resume --stop-after 5 --json "$work/dp.json"
    expect_rc 0; expect_out "resumed autoencoder at step 10"
    [[ "$(json_number "$work/dp.json" steps)" == 15 ]] || fail "the resumed run should end at step 15"
    run bash "$launch" 2 autoencoder "${base[@]}" --out "$work/dp" --resume --freeze-encoder --stop-after 5 \
      --json "$work/dp.json"
    expect_rc 0; expect_out "encoder frozen"
    [[ "$(json_number "$work/dp.json" steps)" == 20 ]] || fail "the frozen-encoder run should end at step 20"
    # A rank that fails makes the script fail.
    run bash "$launch" 2 stepper "${base[@]}" --out "$work/none"; expect_rc 1; expect_out "rank"
    # Killing one rank stops the other with a message, well within a minute (no hang).
    sed 's/^steps = 200$/steps = 1000000/' "$configs/training/tiny.toml" >"$work/long.toml"
    long=(--db "$work/db.mmdb" --config "$work/long.toml" --threads 1 --out "$work/kill" --world-size 2
          --master "127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')")
    "$tools/lmm-train" autoencoder "${long[@]}" --rank 0 >"$work/rank0.log" 2>&1 &
    rank0=$!
    "$tools/lmm-train" autoencoder "${long[@]}" --rank 1 >"$work/rank1.log" 2>&1 &
    rank1=$!
    for ((i = 0; i < 600; ++i)); do grep -q "autoencoder step" "$work/rank0.log" && break; sleep 0.1; done
    grep -q "autoencoder step" "$work/rank0.log" || { kill "$rank0" "$rank1"; cat "$work/rank0.log" >&2; fail "rank 0 did not train"; }
    kill -KILL "$rank1"
    for ((i = 0; i < 600; ++i)); do kill -0 "$rank0" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$rank0" 2>/dev/null && { kill -KILL "$rank0"; fail "rank 0 still runs 60 s after rank 1 was killed"; }
    wait "$rank0"; rc=$?
    cp "$work/rank0.log" "$work/log"
    expect_rc 1; expect_out "lost the other ranks"
    ;;
  *) fail "unknown case $case_name" ;;
esac
echo "ok: $case_name"
