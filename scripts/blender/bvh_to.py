# Blender (3.4, headless) script: converts BVH files to FBX or glTF binary as a studio's Blender
# would write them, for lmmkit's foreign-file checks (scripts/foreign-files.sh).
# Usage: blender -b --factory-startup --python scripts/blender/bvh_to.py -- KIND OUT_DIR BVH...
#   KIND  fbx, fbx-z-up, glb, or fbx-mixamo-z-up
# Each BVH file (centimetres, as the Bandai data) is imported at 0.01 scale into an empty scene,
# with the scene's frame rate and range set from the file, and exported with its animation baked
# on every frame: OUT_DIR/<stem>.fbx (no leaf bones, no key simplification; Y up and -Z forward,
# Blender's default, or with fbx-z-up Z up and Y forward) or OUT_DIR/<stem>.glb. fbx-mixamo-z-up
# also renames the bones as Mixamo names its rig ("mixamorig:LeftUpLeg", ...) and joint_Root as
# Root, for configs/skeletons/mixamo.toml.
import builtins
import os
import sys

import bpy

# Blender 3.4's BVH importer opens files in mode 'rU', which Python 3.11 refuses.
_open = builtins.open
builtins.open = lambda file, mode="r", *args, **kwargs: _open(file, mode.replace("U", ""), *args, **kwargs)

MIXAMO_NAMES = {"Hips": "Hips", "Spine": "Spine", "Chest": "Spine1", "Neck": "Neck", "Head": "Head"}
for side, word in (("_L", "Left"), ("_R", "Right")):
    for bandai, mixamo in (("Shoulder", "Shoulder"), ("UpperArm", "Arm"), ("LowerArm", "ForeArm"), ("Hand", "Hand"),
                           ("UpperLeg", "UpLeg"), ("LowerLeg", "Leg"), ("Foot", "Foot"), ("Toes", "ToeBase")):
        MIXAMO_NAMES[bandai + side] = word + mixamo


def rename_as_mixamo(armature):
    """Bandai bone names to Mixamo's; joint_Root (which carries the root motion in some clips) to Root."""
    for bone in armature.data.bones:
        if bone.name in MIXAMO_NAMES:
            bone.name = "mixamorig:" + MIXAMO_NAMES[bone.name]
        elif bone.name == "joint_Root":
            bone.name = "Root"


args = sys.argv[sys.argv.index("--") + 1:]
if len(args) < 3 or args[0] not in ("fbx", "fbx-z-up", "glb", "fbx-mixamo-z-up"):
    sys.exit("usage: blender -b --python bvh_to.py -- fbx|fbx-z-up|glb|fbx-mixamo-z-up OUT_DIR BVH...")
kind, out_dir, files = args[0], args[1], args[2:]
os.makedirs(out_dir, exist_ok=True)
for bvh in files:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.ops.import_anim.bvh(filepath=bvh, global_scale=0.01, update_scene_fps=True)
    scene = bpy.context.scene
    first, last = bpy.context.object.animation_data.action.frame_range
    scene.frame_start, scene.frame_end = int(first), int(last)
    if "mixamo" in kind:
        rename_as_mixamo(bpy.context.object)
    out = os.path.join(out_dir, os.path.splitext(os.path.basename(bvh))[0] + (".glb" if kind == "glb" else ".fbx"))
    if kind != "glb":
        axes = {"axis_up": "Z", "axis_forward": "Y"} if kind.endswith("z-up") else {}
        bpy.ops.export_scene.fbx(filepath=out, bake_anim=True, add_leaf_bones=False, bake_anim_simplify_factor=0.0,
                                 bake_anim_use_all_actions=False, bake_anim_use_nla_strips=False, **axes)
    else:
        bpy.ops.export_scene.gltf(filepath=out, export_format="GLB", export_animations=True)
    print("bvh_to.py: wrote", out)
