# Blender (3.4, headless) script: does Blender read lmmkit's .glb as the BVH it came from?
# Usage: blender -b --factory-startup --python scripts/blender/check_glb.py -- GLB BVH [FRAMES]
# Imports the BVH file (centimetres, scaled by 0.01; Blender's BVH importer) and the .glb (Blender's
# glTF importer, which makes one object per node) into one scene at the BVH's frame rate, and at
# FRAMES sampled frames (default 10, spread over the clip) prints the largest distance between a
# joint's world position in the two, by name (the BVH's frame F against the .glb's time (F - first) /
# fps), as "check_glb.py: N joints, F frames, largest
# distance D mm (joint J, frame K)". Exits 1 when a joint is missing.
import builtins
import sys

import bpy
import numpy

numpy.bool = bool  # Blender 3.4's glTF importer uses numpy.bool, gone since numpy 1.24 (its skins need it)

_open = builtins.open  # Blender 3.4's BVH importer opens files in mode 'rU', which Python 3.11 refuses
builtins.open = lambda file, mode="r", *args, **kwargs: _open(file, mode.replace("U", ""), *args, **kwargs)

args = sys.argv[sys.argv.index("--") + 1:]
if len(args) not in (2, 3):
    sys.exit("usage: blender -b --python check_glb.py -- GLB BVH [FRAMES]")
glb, bvh, samples = args[0], args[1], int(args[2]) if len(args) == 3 else 10
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_anim.bvh(filepath=bvh, global_scale=0.01, update_scene_fps=True)
armature = bpy.context.object
first, last = (int(f) for f in armature.animation_data.action.frame_range)
bpy.ops.import_scene.gltf(filepath=glb)
nodes = {o.name: o for o in bpy.data.objects if o.type == "EMPTY"}
# The glTF importer keys time 0 at frame 0, the BVH importer the first frame at frame 1.
glb_first = min(int(o.animation_data.action.frame_range[0]) for o in nodes.values() if o.animation_data and o.animation_data.action)
missing = [b.name for b in armature.pose.bones if b.name not in nodes]
if missing:
    sys.exit("check_glb.py: joints missing from the .glb: " + ", ".join(missing))
worst, where = 0.0, ("", 0)
frames = sorted({first + round(i * (last - first) / max(1, samples - 1)) for i in range(samples)})
for frame in frames:
    bpy.context.scene.frame_set(frame)
    wanted = {bone.name: (armature.matrix_world @ bone.head).copy() for bone in armature.pose.bones}
    bpy.context.scene.frame_set(frame - first + glb_first)
    for name, want in wanted.items():
        distance = (want - nodes[name].matrix_world.translation).length
        if distance > worst:
            worst, where = distance, (name, frame)
print("check_glb.py: %d joints, %d frames, largest distance %.4f mm (joint %s, frame %d)"
      % (len(armature.pose.bones), len(frames), 1000.0 * worst, where[0], where[1]))
