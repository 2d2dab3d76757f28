# Blender (3.4, headless) script: re-export the skinned mesh of a .glb as Blender writes it.
# Usage: blender -b --factory-startup --python scripts/blender/glb_mesh.py -- IN.glb OUT.glb
# Imports IN.glb with Blender's glTF importer (an armature and its skinned mesh) and exports them
# with Blender's glTF exporter, without animations: a character file made by another program, for
# `--mesh` (tests/data/blender/spindles.glb is lmm-import --convert glb --mesh spindles's output of
# a Bandai clip, passed through this script).
import sys

import bpy
import numpy

numpy.bool = bool  # Blender 3.4's glTF importer uses numpy.bool, gone since numpy 1.24 (its skins need it)

args = sys.argv[sys.argv.index("--") + 1:]
if len(args) != 2:
    sys.exit("usage: blender -b --python glb_mesh.py -- IN.glb OUT.glb")
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.ops.import_scene.gltf(filepath=args[0])
if not any(o.type == "MESH" for o in bpy.data.objects):
    sys.exit("glb_mesh.py: " + args[0] + " has no mesh")
bpy.ops.export_scene.gltf(filepath=args[1], export_format="GLB", export_animations=False, export_skins=True)
