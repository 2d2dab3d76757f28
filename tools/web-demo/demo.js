// lmmkit browser demo: loads the WebAssembly runtime (lmm.js, the C API of lmm/lmm.h), a model
// bundle (assets/model.lmmw: learned motion matching) or a database (assets/db.mmdb: database
// motion matching, with ?controller=database), drives one character from the keyboard and draws
// it with three.js (an ES module: index.html's import map) as a skinned body under a sun's
// shadows: spindles around its bones by default, or a dropped .glb character whose bones map to
// its joints by name; also its desired trajectory and its feet in contact. ?characters=N adds
// N - 1 characters of the same asset in a grid, on the same input (frame-time measurements). Path mode
// (P): a path drawn on the ground with the mouse is followed by a path character (LHMM, Lee, Kwon &
// Lee 2023) made from the database (assets/db.mmdb). Gamepads work through the Gamepad API.
// A database character, or a learned one whose model was trained with tags, takes gameplay
// control: keys 1-4 play the wave, bow, kick and punch actions (X cancels), 5-9 switch among the
// game states of assets/states.toml (0: none; it starts in the first), and the panel shows the
// played tags and the last events.
// window.lmmDemo exposes its state to tests (tests/web/).
import * as THREE from 'three';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';

const demo = {
  ready: false, errors: [], controller: '', updateMicroseconds: 0, frameMilliseconds: 0, updates: 0,
  root: [0, 0, 0], facingDegrees: 0, speed: 0,
  paused: false,  // tests: keep drawing the last pose without updating
  joints: [],     // world positions [x, y, z] of the drawn joints (the pose on screen)
  mvp: null,      // the view-projection matrix of the last frame (column-major)
  // Path mode: state 'off', 'ready' (draw with the mouse), 'drawing', 'following' or 'completed';
  // meanDistance (m): time-weighted mean horizontal distance from the root to the followed path's
  // polyline until completion; end: the path's last point [x, z].
  path: { state: 'off', mode: 'local', speedScale: 0, samples: 0, points: 0, desired: 0, completed: false,
          meanDistance: 0, seconds: 0, end: null, message: '' },
  counters: { updates: 0, searches: 0, transitions: 0 },  // the shown character's
  playing: '',          // clip and frame (database, path) or decoder experts and weights (learned)
  playingLabel: '',     // what `playing` shows
  contacts: [],         // indices of the contact joints in contact now
  // The shown character's body: kind 'spindles' (the default) or 'glb' (a dropped character), its
  // name, bones, how many of them follow a joint, how many joints they follow, and the skeleton's joint count.
  body: null,
  tint: false,          // tests: draw the body flat in pure green (kTintColor), without the lines and ribbons
  bodySamples: null,    // tests: (count) => skinned vertices and the joints they follow
  bodyBones: null,      // tests: () => the world positions of the body's bones that follow a joint, and of their joints
  characters: 1,        // characters on the page (?characters=N)
  frameWork: 0,         // milliseconds of the last frame's script (updates, posing, draw calls)
  fakeGamepad: null,    // tests: a Gamepad-like object used instead of navigator.getGamepads()
  gamepadControls: null,  // the pure mapping of a gamepad to the controls (for tests)
  openFile: null,       // async (name, bytes): what dropping that file does; returns the panel's message
  fileMessage: '',
  // Foot locking of every character the page makes (lmm_character_set_foot_lock; F toggles it).
  footLock: true,
  // Gameplay control of the keyboard character (database, or learned with tags): the played tags, the
  // last events (newest last: {name, frame, time (s into its update), update}), how many events
  // there were (in all and per name), whether an action plays, the state set by a key, the game states' names, and
  // what the last gameplay key did.
  gameplay: { tags: [], events: [], eventCount: 0, counts: {}, action: false, state: 'none', states: [], message: '' },
};
window.lmmDemo = demo;

const keys = new Set();
const typing = (e) => e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement;
addEventListener('keydown', (e) => { if (!typing(e)) keys.add(e.code); });
addEventListener('keyup', (e) => keys.delete(e.code));
addEventListener('blur', () => keys.clear());

// ---- gamepads (the standard mapping, https://w3c.github.io/gamepad/#remapping) ----
const kDeadZone = 0.15;
// The controls a gamepad gives: left stick moves (its y is down-positive), right stick orbits the
// camera, A or the right trigger runs, a shoulder button strafes. Pure: tests feed plain objects.
function gamepadControls(pad) {
  const axis = (i) => {
    const v = (pad && pad.axes && pad.axes[i]) || 0;
    return Math.abs(v) < kDeadZone ? 0 : v;
  };
  const pressed = (i) => {
    const b = pad && pad.buttons && pad.buttons[i];
    return !!b && (b.pressed || b.value > 0.5);
  };
  return { moveX: axis(0), moveY: -axis(1), orbitX: axis(2), orbitY: axis(3), run: pressed(0) || pressed(7),
           strafe: pressed(4) || pressed(5) };
}
demo.gamepadControls = gamepadControls;

// The test's fake gamepad, else the first connected one, else null.
function currentGamepad() {
  if (demo.fakeGamepad) return demo.fakeGamepad;
  for (const pad of (navigator.getGamepads ? navigator.getGamepads() : [])) if (pad && pad.connected) return pad;
  return null;
}

// ---- small vector helpers ----
function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
function normalize(a) { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; }
// The camera's right (x), up (y) and backward (z) axes looking from `eye` at `target`.
function cameraAxes(eye, target, up) {
  const z = normalize(sub(eye, target)), x = normalize(cross(up, z)), y = cross(z, x);
  return { x, y, z };
}

// ---- the character's body: a three.js SkinnedMesh whose bones take the joints' world transforms ----
// A pose is what the page reads of a character or BVH file: joint `names`, `parents` (-1 for the
// root) and world `positions` (x y z per joint, metres) and `rotations` (x y z w per joint).
const kBodyColor = 0xc9b59c;
const kTintColor = 0x00ff00;  // tests: the body drawn flat in this colour (lmmDemo.tint)
const kContactColor = [0.95, 0.55, 0.15];  // the disc under a joint in contact

// The skeleton's rest pose: joint positions with every world rotation the identity, each joint at
// its offset from its parent as `pose` gives it (the offset in the parent's frame, constant on a
// rigid skeleton; parents come before their children).
function restPositions(pose) {
  const rest = [], inverse = new THREE.Quaternion();
  pose.parents.forEach((parent, j) => {
    const p = new THREE.Vector3().fromArray(pose.positions, 3 * j);
    if (parent < 0) return rest.push(p);
    inverse.fromArray(pose.rotations, 4 * parent).invert();
    rest.push(p.sub(new THREE.Vector3().fromArray(pose.positions, 3 * parent)).applyQuaternion(inverse).add(rest[parent]));
  });
  return rest;
}

// The default body's geometry around the rest pose `rest` (the shape of lmm-sim --mesh spindles,
// thicker): for each joint whose parent is not the root (joint 0), a closed eight-sided spindle
// from the parent to the joint, rings at a fifth and four fifths of the bone, as thick as 15% of
// its length (2 to 7 cm), every vertex bound to the parent with weight 1 but the tip at the joint,
// bound to the joint: hands, feet and head end on their joints even where a clip's local positions
// differ from the skeleton's offsets (a BVH whose joints carry position channels).
function spindleGeometry(parents, rest) {
  const kSides = 8, positions = [], normals = [], skinIndex = [], skinWeight = [], indices = [];
  parents.forEach((parent, j) => {
    const a = rest[parent], b = rest[j], bone = parent >= 1 ? a.distanceTo(b) : 0;
    if (bone < 0.01) return;
    const axis = b.clone().sub(a).divideScalar(bone);
    const side = new THREE.Vector3().crossVectors(axis, new THREE.Vector3(...(Math.abs(axis.y) < 0.9 ? [0, 1, 0] : [1, 0, 0]))).normalize();
    const up = new THREE.Vector3().crossVectors(side, axis), radius = Math.min(0.07, Math.max(0.02, 0.15 * bone));
    const first = positions.length / 3;
    const add = (p, n, boundTo = parent) => {
      positions.push(p.x, p.y, p.z);
      normals.push(n.x, n.y, n.z);
      skinIndex.push(boundTo, 0, 0, 0);
      skinWeight.push(1, 0, 0, 0);
    };
    add(a, axis.clone().negate());  // tips, then the two rings
    add(b, axis, j);
    for (const along of [0.2, 0.8]) {
      for (let k = 0; k < kSides; ++k) {
        const angle = 2 * Math.PI * k / kSides;
        const out = side.clone().multiplyScalar(Math.cos(angle)).addScaledVector(up, Math.sin(angle));
        add(a.clone().lerp(b, along).addScaledVector(out, radius), out);
      }
    }
    for (let k = 0; k < kSides; ++k) {
      const next = (k + 1) % kSides, r1 = first + 2, r2 = first + 2 + kSides;
      indices.push(first, r1 + k, r1 + next, r1 + k, r2 + next, r1 + next, r1 + k, r2 + k, r2 + next, first + 1, r2 + next, r2 + k);
    }
  });
  const geometry = new THREE.BufferGeometry();
  geometry.setAttribute('position', new THREE.Float32BufferAttribute(positions, 3));
  geometry.setAttribute('normal', new THREE.Float32BufferAttribute(normals, 3));
  geometry.setAttribute('skinIndex', new THREE.Uint16BufferAttribute(skinIndex, 4));
  geometry.setAttribute('skinWeight', new THREE.Float32BufferAttribute(skinWeight, 4));
  geometry.setIndex(indices);
  return geometry;
}

// What every body does: `object` (in the scene), `meshes` (its skinned meshes), pose(p) (places
// its bones for pose p, remembered as `drawn`), influence(vertex) (the bone that moves a vertex of
// meshes[0] most and the joint that bone follows, -1 for none), jointOfBone(k) (the joint that
// bone k of meshes[0]'s skeleton follows, -1 or undefined for none), tint(on) (tests: draws it
// flat in kTintColor) and dispose().
function finishBody(body, jointOfBone) {
  body.jointOfBone = jointOfBone;
  const tint = new THREE.MeshBasicMaterial({ color: kTintColor });
  const materials = body.meshes.map((mesh) => mesh.material);
  body.tint = (on) => body.meshes.forEach((mesh, k) => { mesh.material = on ? tint : materials[k]; });
  body.influence = (vertex) => {
    const mesh = body.meshes[0], index = mesh.geometry.attributes.skinIndex, weight = mesh.geometry.attributes.skinWeight;
    let best = 0;
    for (let k = 1; k < 4; ++k) if (weight.getComponent(vertex, k) > weight.getComponent(vertex, best)) best = k;
    const bone = index.getComponent(vertex, best);
    return { bone: mesh.skeleton.bones[bone], joint: jointOfBone(bone) };
  };
  for (const mesh of body.meshes) {
    mesh.castShadow = mesh.receiveShadow = true;
    mesh.frustumCulled = false;  // its bounds move with the bones
  }
  return body;
}

// The default body of `pose`'s skeleton: spindles (spindleGeometry) in `material`, one three.js
// Bone per joint set to the joint's world transform (bind matrices: the rest pose's inverses).
function spindleBody(pose, material) {
  const rest = restPositions(pose);
  const bones = pose.parents.map(() => new THREE.Bone());
  const mesh = new THREE.SkinnedMesh(spindleGeometry(pose.parents, rest), material);
  const object = new THREE.Group().add(mesh, ...bones);
  mesh.bind(new THREE.Skeleton(bones, rest.map((r) => new THREE.Matrix4().makeTranslation(-r.x, -r.y, -r.z))), new THREE.Matrix4());
  const body = {
    kind: 'spindles', name: 'spindles', object, meshes: [mesh], bones: bones.length, mapped: bones.length,
    jointsMapped: bones.length, drawn: null,
    pose(p) {
      bones.forEach((bone, j) => {
        bone.position.fromArray(p.positions, 3 * j);
        bone.quaternion.fromArray(p.rotations, 4 * j);
      });
      body.drawn = p;
    },
    dispose() { mesh.geometry.dispose(); },
  };
  return finishBody(body, (bone) => bone);
}

// A dropped .glb parsed by three.js's GLTFLoader, made ready to wear: its first SkinnedMesh, the
// skin's bones in scene order (parents first) with their transforms and world rotations in the
// skin's bind pose (its inverse bind matrices). Throws without a skinned mesh.
async function loadCharacter(name, bytes) {
  const gltf = await new GLTFLoader().parseAsync(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength), '');
  let skinned = null;
  gltf.scene.traverse((o) => { if (!skinned && o.isSkinnedMesh) skinned = o; });
  if (!skinned) throw new Error(`${name}: no skinned mesh in the file`);
  skinned.skeleton.pose();
  gltf.scene.updateMatrixWorld(true);
  const skin = new Set(skinned.skeleton.bones), bones = [];
  gltf.scene.traverse((o) => { if (skin.has(o)) bones.push(o); });
  const meshes = [skinned];
  gltf.scene.traverse((o) => { if (o.isSkinnedMesh && o !== skinned) meshes.push(o); });
  return {
    name, scene: gltf.scene, meshes, bones, meshName: skinned.name || 'unnamed',
    rest: bones.map((b) => ({ position: b.position.clone(), quaternion: b.quaternion.clone() })),
    bind: bones.map((b) => b.getWorldQuaternion(new THREE.Quaternion())),
  };
}

// The body of a loaded .glb character (loadCharacter) on `pose`'s skeleton: its bones named like
// a joint (case-insensitive) take the world rotation of that joint times their own rest world
// rotation (the runtime's rest pose has identity world rotations: a BVH file's offsets, lmm-sim's
// .glb), and the root's, its children's (the hips) and any topmost mapped bone's world position;
// other bones keep their rest place under their parents. Throws when no bone is named like a joint.
function glbBody(character, pose) {
  const joints = new Map((pose.names || []).map((n, j) => [THREE.PropertyBinding.sanitizeNodeName(n).toLowerCase(), j]));
  const map = character.bones.map((b) => (joints.has(b.name.toLowerCase()) ? joints.get(b.name.toLowerCase()) : -1));
  const mapped = map.filter((j) => j >= 0).length;
  if (mapped === 0) {
    throw new Error(`${character.name}: none of its ${character.bones.length} bones (${character.bones.slice(0, 4).map((b) => b.name).join(', ')}, ...) ` +
                    `is named like a joint of the character (${(pose.names || []).slice(0, 4).join(', ')}, ...)`);
  }
  const index = new Map(character.bones.map((b, k) => [b, k]));
  const placed = character.bones.map((b, k) => {
    if (map[k] < 0) return false;
    for (let up = b.parent; up; up = up.parent) if (index.has(up) && map[index.get(up)] >= 0) return pose.parents[map[k]] <= 0;
    return true;
  });
  character.bones.forEach((b, k) => { b.position.copy(character.rest[k].position); b.quaternion.copy(character.rest[k].quaternion); });
  const object = new THREE.Group().add(character.scene);
  character.scene.updateMatrixWorld(true);
  const position = new THREE.Vector3(), parentRotation = new THREE.Quaternion(), scale = new THREE.Vector3();
  const body = {
    kind: 'glb', name: character.name, object, meshes: character.meshes, bones: character.bones.length, mapped,
    jointsMapped: new Set(map.filter((j) => j >= 0)).size, drawn: null,
    pose(p) {
      character.bones.forEach((bone, k) => {
        const j = map[k];
        if (j >= 0) {
          bone.parent.matrixWorld.decompose(position, parentRotation, scale);
          bone.quaternion.fromArray(p.rotations, 4 * j).multiply(character.bind[k]).premultiply(parentRotation.invert());
          if (placed[k]) bone.position.copy(bone.parent.worldToLocal(position.fromArray(p.positions, 3 * j)));
        }
        bone.updateWorldMatrix(false, false);
      });
      body.drawn = p;
    },
    dispose() { object.remove(character.scene); },
  };
  const boneIndex = new Map(character.meshes[0].skeleton.bones.map((b, k) => [k, map[index.get(b)]]));
  return finishBody(body, (bone) => boneIndex.get(bone));
}

// Appends the line from `a` to `b` in colour `c` to `lines` (x y z r g b per vertex).
function pushLine(lines, a, b, c) {
  lines.push(a[0], a[1], a[2], c[0], c[1], c[2], b[0], b[1], b[2], c[0], c[1], c[2]);
}

// A 20 m grid of 1 m cells around (cx, cz) on the ground, drawn as 1 m segments (a long line
// that crosses the camera plane is dropped by some rasterisers, e.g. SwiftShader).
function gridLines(cx, cz) {
  const lines = [];
  for (let k = -10; k <= 10; ++k) {
    const shade = k === 0 ? [0.35, 0.38, 0.42] : [0.22, 0.25, 0.28];
    for (let m = -10; m < 10; ++m) {
      pushLine(lines, [cx + k, 0, cz + m], [cx + k, 0, cz + m + 1], shade);
      pushLine(lines, [cx + m, 0, cz + k], [cx + m + 1, 0, cz + k], shade);
    }
  }
  return lines;
}

// ---- three.js: the scene, its lights and shadows, and the page's coloured lines and shapes ----
// A LineSegments or Mesh `object` whose vertices (x y z r g b each, sRGB colours) set() replaces.
function colouredVertices(object) {
  let capacity = 0;
  const colour = new THREE.Color();
  object.frustumCulled = false;
  return {
    object,
    set(vertices) {
      const count = vertices.length / 6;
      if (count > capacity) {
        capacity = Math.max(1024, 2 * count);
        const buffer = new THREE.InterleavedBuffer(new Float32Array(6 * capacity), 6).setUsage(THREE.DynamicDrawUsage);
        object.geometry.dispose();
        object.geometry = new THREE.BufferGeometry();
        object.geometry.setAttribute('position', new THREE.InterleavedBufferAttribute(buffer, 3, 0));
        object.geometry.setAttribute('color', new THREE.InterleavedBufferAttribute(buffer, 3, 3));
      }
      const data = object.geometry.attributes.position.data, array = data.array;
      for (let i = 0; i < vertices.length; i += 6) {
        colour.setRGB(vertices[i + 3], vertices[i + 4], vertices[i + 5], THREE.SRGBColorSpace);
        array[i] = vertices[i];
        array[i + 1] = vertices[i + 1];
        array[i + 2] = vertices[i + 2];
        array[i + 3] = colour.r;
        array[i + 4] = colour.g;
        array[i + 5] = colour.b;
      }
      data.needsUpdate = true;
      object.geometry.setDrawRange(0, count);
    },
  };
}

// The page's three.js scene on `canvas`: a hemisphere light and a sun whose shadows fall on a disc
// of the ground around the characters (the ground is the background colour under the grid: a lit,
// shadowed ground plane tripled the frame time of chromium's software renderer), the camera, and
// coloured lines and flat shapes (ribbons, discs) set each frame.
function createStage(canvas) {
  const renderer = new THREE.WebGLRenderer({ canvas });
  renderer.setPixelRatio(devicePixelRatio);
  renderer.shadowMap.enabled = true;
  renderer.shadowMap.type = THREE.PCFShadowMap;
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0x1c2126);
  const camera = new THREE.PerspectiveCamera(kFovY * 180 / Math.PI, 1, 0.05, 200);
  const sun = new THREE.DirectionalLight(0xfff2e0, 2.4);
  Object.assign(sun.shadow, { bias: -0.0005, normalBias: 0.01 });
  sun.castShadow = true;
  sun.shadow.mapSize.set(512, 512);
  const shade = new THREE.Mesh(new THREE.CircleGeometry(1, 48).rotateX(-Math.PI / 2), new THREE.ShadowMaterial({ opacity: 0.5 }));
  shade.receiveShadow = true;
  const lines = colouredVertices(new THREE.LineSegments(new THREE.BufferGeometry(), new THREE.LineBasicMaterial({ vertexColors: true })));
  const shapes = colouredVertices(new THREE.Mesh(new THREE.BufferGeometry(),
                                                 new THREE.MeshBasicMaterial({ vertexColors: true, side: THREE.DoubleSide })));
  scene.add(new THREE.HemisphereLight(0xdfe8ff, 0x40382e, 1.3), sun, sun.target, shade, lines.object, shapes.object);
  let shadowRadius = 0;
  return {
    scene, camera,
    // Draws a frame from `eye` looking at `target`, with `lineVertices` and `shapeVertices` (x y z r g b
    // per vertex: line segments, triangles), the sun's shadows on the ground within `radius` metres
    // of `focus`; returns the view-projection matrix (column-major).
    draw(eye, target, focus, radius, lineVertices, shapeVertices) {
      const width = canvas.clientWidth, height = canvas.clientHeight;
      if (canvas.width !== Math.round(width * devicePixelRatio) || canvas.height !== Math.round(height * devicePixelRatio)) {
        renderer.setSize(width, height, false);
      }
      camera.aspect = width / height;
      camera.updateProjectionMatrix();
      camera.position.set(...eye);
      camera.lookAt(...target);
      camera.updateMatrixWorld();
      shade.position.set(focus[0], 0, focus[2]);
      shade.scale.setScalar(radius);
      sun.target.position.set(...focus);
      sun.position.set(focus[0] + 6, 12, focus[2] + 4.5);
      if (radius !== shadowRadius) {
        shadowRadius = radius;
        Object.assign(sun.shadow.camera, { left: -radius, right: radius, top: radius, bottom: -radius, near: 1, far: 40 });
        sun.shadow.camera.updateProjectionMatrix();
      }
      lines.set(lineVertices);
      shapes.set(shapeVertices);
      renderer.render(scene, camera);
      return new THREE.Matrix4().multiplyMatrices(camera.projectionMatrix, camera.matrixWorldInverse).toArray();
    },
  };
}

// ---- drawing helpers ----
// The ground direction +Z turned by the x, y, z, w quaternion `q`.
function forwardOf(q) {
  const [x, y, z, w] = q;
  return [2 * (x * z + w * y), 0, 1 - 2 * (x * x + y * y)];
}

// Horizontal distance from `p` to the polyline through `points` (a flat x y z array).
function distanceToPolyline(p, points) {
  let best = Infinity;
  for (let i = 0; i + 3 < points.length; i += 3) {
    const ax = points[i], az = points[i + 2], dx = points[i + 3] - ax, dz = points[i + 5] - az;
    const length2 = dx * dx + dz * dz;
    const t = length2 > 0 ? Math.min(1, Math.max(0, ((p[0] - ax) * dx + (p[2] - az) * dz) / length2)) : 0;
    best = Math.min(best, Math.hypot(p[0] - ax - t * dx, p[2] - az - t * dz));
  }
  return best;
}

// The point where the ray from the camera of `view` through CSS pixel (px, py) meets the ground,
// or null when it points above the horizon.
function groundPoint(view, px, py) {
  const nx = 2 * px / view.width - 1, ny = 1 - 2 * py / view.height, t = Math.tan(kFovY / 2);
  const d = [0, 1, 2].map((i) => -view.axes.z[i] + nx * t * view.aspect * view.axes.x[i] + ny * t * view.axes.y[i]);
  if (d[1] > -1e-4) return null;
  const s = -view.eye[1] / d[1];
  return [view.eye[0] + s * d[0], 0, view.eye[2] + s * d[2]];
}

// ---- the viewer: BVH files played without the runtime ----
// The joints of a BVH file's hierarchy ({name, parent, offset, channels}; End Sites are joints
// without channels) and its frames (one array of channel values each) and frame time; throws
// with the token at fault.
function parseBvh(text) {
  const tokens = text.split(/\s+/).filter(Boolean);
  let at = 0;
  const next = () => {
    if (at >= tokens.length) throw new Error('the file ends inside its hierarchy or motion');
    return tokens[at++];
  };
  const number = () => {
    const token = next(), value = Number(token);
    if (!Number.isFinite(value)) throw new Error(`'${token}' (token ${at}) is not a number`);
    return value;
  };
  if (next() !== 'HIERARCHY') throw new Error('not a BVH file: it does not start with HIERARCHY');
  const joints = [], open = [];
  for (let token = next(); token !== 'MOTION'; token = next()) {
    const current = joints[open[open.length - 1]];
    if (token === 'ROOT' || token === 'JOINT' || token === 'End') {
      joints.push({ name: token === 'End' ? `${next()} of ${current.name}` : next(), parent: current ? open[open.length - 1] : -1,
                    offset: [0, 0, 0], channels: [] });
    } else if (token === '{') {
      open.push(joints.length - 1);
    } else if (token === '}') {
      open.pop();
    } else if (token === 'OFFSET' && current) {
      current.offset = [number(), number(), number()];
    } else if (token === 'CHANNELS' && current) {
      current.channels = Array.from({ length: number() }, next);
    } else {
      throw new Error(`unexpected '${token}' in the hierarchy (token ${at})`);
    }
  }
  if (next() !== 'Frames:') throw new Error('MOTION must start with Frames:');
  const count = number();
  if (next() !== 'Frame' || next() !== 'Time:') throw new Error('Frames: must be followed by Frame Time:');
  const frameTime = number();
  const width = joints.reduce((sum, j) => sum + j.channels.length, 0);
  const frames = Array.from({ length: count }, () => Array.from({ length: width }, number));
  if (!(frameTime > 0) || count < 1 || joints.length === 0) throw new Error('a BVH needs joints, frames and a positive frame time');
  return { joints, frames, frameTime };
}

// 3x3 rotation matrices (row-major arrays of 9) for BVH's Euler channels.
function rotationMatrix(axis, degrees) {
  const c = Math.cos(degrees * Math.PI / 180), s = Math.sin(degrees * Math.PI / 180);
  if (axis === 'X') return [1, 0, 0, 0, c, -s, 0, s, c];
  if (axis === 'Y') return [c, 0, s, 0, 1, 0, -s, 0, c];
  return [c, -s, 0, s, c, 0, 0, 0, 1];
}
function multiply3(a, b) {
  return Array.from({ length: 9 }, (_, k) => a[k - k % 3] * b[k % 3] + a[k - k % 3 + 1] * b[k % 3 + 3] + a[k - k % 3 + 2] * b[k % 3 + 6]);
}
function apply3(m, v) {
  return [0, 1, 2].map((r) => m[3 * r] * v[0] + m[3 * r + 1] * v[1] + m[3 * r + 2] * v[2]);
}

// World positions (metres: `scale` per file unit) of every joint of `bvh` in frame `f`: rotation
// channels compose in their listed order, position channels replace the joint's offset.
function bvhPositions(bvh, f, scale) {
  const values = bvh.frames[f], rotations = [], positions = [];
  let at = 0;
  bvh.joints.forEach((joint, j) => {
    let local = [1, 0, 0, 0, 1, 0, 0, 0, 1], offset = joint.offset.slice();
    for (const channel of joint.channels) {
      const value = values[at++], axis = channel[0];
      if (channel.endsWith('rotation')) local = multiply3(local, rotationMatrix(axis, value));
      else offset['XYZ'.indexOf(axis)] = value;
    }
    const parent = joint.parent;
    rotations.push(parent < 0 ? local : multiply3(rotations[parent], local));
    positions.push(parent < 0 ? offset : apply3(rotations[parent], offset).map((v, i) => v + positions[parent][i]));
  });
  return { positions: positions.map((p) => p.map((v) => v * scale)), rotations };
}

// A BVH file played in a loop: what readCharacter gives for a character (joint 0 the hips' ground
// point, the file's joints from 1, the facing along the hips' travel, bones from the hips down, the
// pose with the file's joint names), without trajectory, contacts or counters. Files whose first frame is more than 10 units tall are taken to be in centimetres.
function bvhClip(bvh, name) {
  const first = bvhPositions(bvh, 0, 1).positions.map((p) => p[1]);
  const scale = Math.max(...first) - Math.min(...first) > 10 ? 0.01 : 1;
  const named = bvh.joints.findIndex((j) => /hips|pelvis/i.test(j.name));
  const hips = named >= 0 ? named : 0;
  // No bone leads to the hips (from a root joint on the ground, say).
  const parents = [-1, ...bvh.joints.map((j, k) => (k === hips ? 0 : j.parent + 1))];
  const names = ['ground', ...bvh.joints.map((j) => j.name)];
  const rotation = new THREE.Quaternion(), matrix = new THREE.Matrix4();
  const ground = (f) => {
    const p = bvhPositions(bvh, (f + bvh.frames.length) % bvh.frames.length, scale).positions[hips];
    return [p[0], 0, p[2]];
  };
  let time = 0, heading = 0;
  return {
    name, joints: parents.length, parents,
    advance(dt) { time += dt; },
    read() {
      const f = Math.floor(time / bvh.frameTime) % bvh.frames.length;
      const { positions, rotations } = bvhPositions(bvh, f, scale);
      const [a, b] = [ground(f - 5), ground(f + 5)];
      if (Math.hypot(b[0] - a[0], b[2] - a[2]) > 0.01) heading = Math.atan2(b[0] - a[0], b[2] - a[2]);
      const all = [[positions[hips][0], 0, positions[hips][2]], ...positions];
      const quaternions = rotations.map((m) => {
        matrix.set(m[0], m[1], m[2], 0, m[3], m[4], m[5], 0, m[6], m[7], m[8], 0, 0, 0, 0, 1);
        return rotation.setFromRotationMatrix(matrix).toArray();
      });
      const pose = { names, parents, positions: all.flat(), rotations: [0, 0, 0, 1, ...quaternions.flat()] };
      return { joint: (j) => all[j], root: all[0], rotation: [0, Math.sin(heading / 2), 0, Math.cos(heading / 2)],
               trajectory: [], played: [], inContact: [], counters: { updates: 0, searches: 0, transitions: 0 },
               playing: `${name}: frame ${f + 1} / ${bvh.frames.length}`, playingLabel: 'BVH file', parents, pose };
    },
  };
}

// ---- the runtime ----
const kFovY = 0.9;
// The speed scale a new path starts with: playback speed / drawing speed. Lee, Kwon & Lee 2023
// Sec. V-A use 0.2 for paths drawn on a screen; the mouse draws on this page's ground at about
// 3-8 m/s, which 0.25 plays at a walk to a jog.
const kDefaultSpeedScale = 0.25;

async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// The assets stage.sh wrote ({model, db}: whether each is there), or null for a site without the list.
async function stagedAssets() {
  const response = await fetch('assets/assets.json');
  return response.ok ? response.json() : null;
}

// The game states stage.sh wrote (assets/states.toml's text), or '' for a site without them.
async function stagedStates() {
  const response = await fetch('assets/states.toml');
  return response.ok ? response.text() : '';
}

// Loads the asset at `url` into the module's file system as `file` and opens it with `load`
// (lmm_database_load or lmm_model_load); throws with the runtime's message.
async function loadAsset(module, url, file, load) {
  module.FS.writeFile(file, await fetchBytes(url));
  const asset = module.ccall(load, 'number', ['string'], [file]);
  if (!asset) throw new Error(`${url}: ${module.UTF8ToString(module._lmm_last_error())}`);
  return asset;
}

// The keyboard character of `controller` ('learned' or 'database') over the asset at `url`, a learned
// character's model (kept for its tag and event names), and the database path characters are made
// from (0 when there is none, with the reason in dbMessage).
async function createCharacter(module, controller, url, params) {
  const failed = () => new Error(`${url}: ${module.UTF8ToString(module._lmm_last_error())}`);
  if (controller === 'database') {
    const database = await loadAsset(module, url, '/asset.mmdb', 'lmm_database_load');
    const character = module._lmm_character_create_database(database, 0, 0, 0);
    if (!character) throw failed();
    return { character, database, dbMessage: '' };
  }
  const model = await loadAsset(module, url, '/asset.lmmw', 'lmm_model_load');
  const character = module._lmm_character_create_learned(model, 0, 0, 0);
  if (!character) throw failed();
  const staged = await stagedAssets();
  const dbUrl = params.get('db') || (staged && staged.db ? 'assets/db.mmdb' : '');
  if (!dbUrl) return { character, model, database: 0, dbMessage: 'no database: path mode needs assets/db.mmdb (stage.sh --db)' };
  return { character, model, database: await loadAsset(module, dbUrl, '/paths.mmdb', 'lmm_database_load'), dbMessage: '' };
}

// What the page reads of one character: its skeleton (joint names and parents), contact joints and
// buffers in the module's heap (allocated once; release() frees them).
function characterView(module, handle) {
  const joints = module._lmm_character_joint_count(handle);
  const contacts = module._lmm_character_contact_count(handle);
  const trajectory = module._lmm_character_trajectory_count(handle);
  const scratch = module._malloc(64);
  const contactJoints = Array.from({ length: contacts }, (_, k) => {
    module._lmm_character_contact(handle, k, scratch, 0);
    return module.HEAP32[scratch >> 2];
  });
  const view = {
    handle, joints, contacts, contactJoints, trajectory, scratch,
    parents: Array.from({ length: joints }, (_, j) => module._lmm_character_joint_parent(handle, j)),
    names: Array.from({ length: joints }, (_, j) => module.UTF8ToString(module._lmm_character_joint_name(handle, j))),
    positions: module._malloc(12 * joints), rotations: module._malloc(16 * joints),
    times: module._malloc(4 * trajectory), trajectoryPositions: module._malloc(12 * trajectory),
    trajectoryRotations: module._malloc(16 * trajectory),
    playedPositions: module._malloc(12 * trajectory), playedDirections: module._malloc(12 * trajectory),
  };
  view.release = () => {
    for (const p of [view.scratch, view.positions, view.rotations, view.times, view.trajectoryPositions, view.trajectoryRotations,
                     view.playedPositions, view.playedDirections]) module._free(p);
  };
  return view;
}

// The pose of `view`'s character (world transforms of its joints).
function readPose(module, view) {
  const f32 = module.HEAPF32;
  module._lmm_character_world_transforms(view.handle, view.positions, view.rotations, view.joints);
  return { names: view.names, parents: view.parents, positions: f32.slice(view.positions >> 2, (view.positions >> 2) + 3 * view.joints),
           rotations: f32.slice(view.rotations >> 2, (view.rotations >> 2) + 4 * view.joints) };
}

// Reads the pose, root, trajectory, contacts, counters and what plays of `view`'s character.
function readCharacter(module, view) {
  const f32 = module.HEAPF32, i32 = module.HEAP32, s = view.scratch >> 2;
  const h = view.handle;
  const pose = readPose(module, view), positions = pose.positions;
  const joint = (j) => [positions[3 * j], positions[3 * j + 1], positions[3 * j + 2]];
  module._lmm_character_root_position(h, view.scratch);
  const root = [f32[s], f32[s + 1], f32[s + 2]];
  module._lmm_character_root_rotation(h, view.scratch);
  const rotation = [f32[s], f32[s + 1], f32[s + 2], f32[s + 3]];
  module._lmm_character_trajectory(h, view.times, view.trajectoryPositions, view.trajectoryRotations, view.trajectory);
  const trajectory = Array.from({ length: view.trajectory }, (_, m) => ({
    time: f32[(view.times >> 2) + m],
    position: [0, 1, 2].map((i) => f32[(view.trajectoryPositions >> 2) + 3 * m + i]),
    facing: forwardOf([0, 1, 2, 3].map((i) => f32[(view.trajectoryRotations >> 2) + 4 * m + i])),
  }));
  module._lmm_character_played_trajectory(h, 0, view.playedPositions, view.playedDirections, view.trajectory);
  const played = Array.from({ length: view.trajectory }, (_, m) => ({
    time: trajectory[m].time,
    position: [0, 1, 2].map((i) => f32[(view.playedPositions >> 2) + 3 * m + i]),
    facing: [0, 1, 2].map((i) => f32[(view.playedDirections >> 2) + 3 * m + i]),
  }));
  const inContact = [];
  for (let k = 0; k < view.contacts; ++k) {
    module._lmm_character_contact(h, k, 0, view.scratch);
    if (i32[s]) inContact.push(view.contactJoints[k]);
  }
  module._lmm_character_counters(h, view.scratch);
  const counters = { updates: i32[s], searches: i32[s + 1], transitions: i32[s + 2] };
  let playing, playingLabel = 'clip @ frame';
  if (module._lmm_character_frame(h, view.scratch, view.scratch + 4)) {
    playing = `${module.UTF8ToString(module._lmm_character_clip_name(h, i32[s + 1]))} @ ${i32[s]}`;
  } else {
    const count = module._lmm_character_decoder_experts(h, view.scratch, view.scratch + 16, 2);
    playingLabel = 'decoder experts';
    playing = count > 0 ? Array.from({ length: count }, (_, j) => `${i32[s + j]} (${f32[s + 4 + j].toFixed(2)})`).join(', ')
                        : 'none (a plain network)';
  }
  return { joint, root, rotation, trajectory, played, inContact, counters, playing, playingLabel, parents: view.parents, pose };
}

// ---- gameplay control: actions, game states, tags and events of a database or learned character ----
const kActionKeys = { Digit1: 'wave', Digit2: 'bow', Digit3: 'kick', Digit4: 'punch' };
const kStateKeys = ['Digit5', 'Digit6', 'Digit7', 'Digit8', 'Digit9'];
const kEventsKept = 6;     // the panel's last events
const kEventCapacity = 16;  // events read per update (lmm_event: 12 bytes)

// Sets the page's foot locking (demo.footLock) on the character `handle`.
function applyFootLock(module, handle) {
  if (!module._lmm_character_set_foot_lock(handle, demo.footLock ? 1 : 0, 0, 0)) {
    demo.errors.push('foot lock: ' + module.UTF8ToString(module._lmm_last_error()));
  }
}

// The names of the [states.NAME] tables of a controller config's text, in order.
function stateNames(config) {
  return [...config.matchAll(/^\s*\[states\.([A-Za-z0-9_-]+)\]/gm)].map((m) => m[1]);
}

// The tag and event names of a loaded asset: { kind: 'database' or 'model', handle }.
function assetNames(module, asset) {
  const api = asset.kind === 'database'
    ? [module._lmm_database_tag_count, module._lmm_database_tag_name, module._lmm_database_event_name_count,
       module._lmm_database_event_name]
    : [module._lmm_model_tag_count, module._lmm_model_tag_name, module._lmm_model_event_name_count,
       module._lmm_model_event_name];
  const names = (count, name) => Array.from({ length: count(asset.handle) }, (_, k) => module.UTF8ToString(name(asset.handle, k)));
  return { tags: names(api[0], api[1]), events: names(api[2], api[3]) };
}

// Gameplay control of the keyboard character: attach() it with its asset ({ kind: 'database' or
// 'model', handle }; a model trained without tags has none of it); key(code) acts on a key; read()
// after each update records the played tags and the update's events into demo.gameplay.
function createGameplay(module, statesConfig) {
  const gameplay = { handle: 0, tagNames: [], eventNames: [], buffer: module._malloc(12 * kEventCapacity) };
  const state = demo.gameplay;
  const error = () => module.UTF8ToString(module._lmm_last_error());
  gameplay.attach = (handle, asset) => {
    const names = assetNames(module, asset);
    const tagged = names.tags.length > 0;
    gameplay.handle = tagged ? handle : 0;
    gameplay.tagNames = names.tags;
    gameplay.eventNames = names.events;
    Object.assign(state, { tags: [], action: false, state: 'none', states: [],
                           message: tagged ? '' : asset.kind === 'database' ? 'the database has no tags'
                             : 'actions and states need a model trained with tags (configs/training/quick-tags.toml)' });
    if (!tagged || !statesConfig) return;
    const set = module.ccall('lmm_character_set_states', 'number', ['number', 'string'], [handle, statesConfig]);
    if (set) state.states = stateNames(statesConfig);
    // The first state (assets/states.toml: explore, any locomotion or standing still) rules from the
    // start, so that actions play only when a key asks for them; key 0 frees the character.
    const first = state.states[0];
    if (set && (!first || module.ccall('lmm_character_set_state', 'number', ['number', 'string'], [handle, first]))) {
      state.state = first || 'none';
    } else {
      state.message = 'states: ' + error();
    }
  };
  gameplay.key = (code) => {
    const h = gameplay.handle;
    if (!h) return;
    if (kActionKeys[code]) {
      const ok = module.ccall('lmm_character_play_action', 'number', ['number', 'string', 'number', 'number'],
                              [h, kActionKeys[code], 0, 0]);
      state.message = ok ? `playing ${kActionKeys[code]}` : error();
    } else if (code === 'KeyX') {
      state.message = module._lmm_character_cancel_action(h) ? 'action cancelled' : error();
    } else if (code === 'Digit0') {
      const ok = module.ccall('lmm_character_set_constraint', 'number', ['number', 'string', 'string', 'string'], [h, '', '', '']);
      if (ok) state.state = 'none';
      state.message = ok ? 'no state: any frame' : error();
    } else if (kStateKeys.includes(code)) {
      const name = state.states[kStateKeys.indexOf(code)];
      if (!name) return;
      const ok = module.ccall('lmm_character_set_state', 'number', ['number', 'string'], [h, name]);
      if (ok) state.state = name;
      state.message = ok ? `state ${name}` : error();
    }
  };
  gameplay.read = (updates) => {
    const h = gameplay.handle;
    if (!h) return;
    const i32 = module.HEAP32, b = gameplay.buffer >> 2;
    module._lmm_character_tags(h, gameplay.buffer);
    const low = i32[b] >>> 0, high = i32[b + 1] >>> 0;
    state.tags = gameplay.tagNames.filter((_, t) => (t < 32 ? (low >>> t) & 1 : (high >>> (t - 32)) & 1));
    state.action = module._lmm_character_action_playing(h) === 1;
    const count = Math.min(kEventCapacity, module._lmm_character_events(h, gameplay.buffer, kEventCapacity));
    for (let k = 0; k < count; ++k) {
      const name = i32[b + 3 * k];
      const event = { name: name === -1 ? 'action_end' : gameplay.eventNames[name] || `#${name}`, frame: i32[b + 3 * k + 1],
                      time: module.HEAPF32[b + 3 * k + 2], update: updates };
      state.events.push(event);
      state.counts[event.name] = (state.counts[event.name] || 0) + 1;
    }
    state.eventCount += Math.max(0, count);
    if (state.events.length > kEventsKept) state.events.splice(0, state.events.length - kEventsKept);
  };
  return gameplay;
}

// Path mode: drawing a path, creating the path character and measuring how closely it follows.
function createPathMode(module, database, dbMessage) {
  const path = {
    on: false, drawing: null, stroke: [], character: null, view: null, points: null, samplesPtr: 0,
    distanceSum: 0, time: 0,
  };
  const status = (state, message) => Object.assign(demo.path, { state, message: message || '' });
  // Path characters come from `handle` (a loaded database) from now on.
  path.setDatabase = (handle) => {
    if (database) module._lmm_database_release(database);
    database = handle;
    dbMessage = '';
    path.toggle(path.on);
  };
  path.toggle = (on) => {
    path.on = on;
    document.getElementById('path-toggle').classList.toggle('on', on);
    if (!database) return status('off', dbMessage);
    status(on ? (path.character ? 'following' : 'ready') : 'off', on ? 'draw a path on the ground' : '');
  };
  // Starts a stroke at ground point `p` seen through `view` (null when it cannot start).
  path.begin = (view, p) => {
    if (!path.on || !database || path.character || !p) return false;
    path.drawing = { view, start: performance.now() };
    path.stroke = [[0, p[0], p[2]]];
    status('drawing');
    return true;
  };
  path.extend = (p) => {
    const last = path.stroke[path.stroke.length - 1];
    const t = (performance.now() - path.drawing.start) / 1000;
    if (p && t > last[0] && Math.hypot(p[0] - last[1], p[2] - last[2]) >= 0.01) path.stroke.push([t, p[0], p[2]]);
    demo.path.samples = path.stroke.length;
  };
  // Ends the stroke: a path character from `start` (x, z, heading) follows it; false on failure.
  path.end = (start) => {
    path.drawing = null;
    const n = path.stroke.length;
    const mode = document.getElementById('path-mode').value === 'global' ? 1 : 0;
    const speedScale = Number(document.getElementById('path-speed').value);
    Object.assign(demo.path, { mode: mode ? 'global' : 'local', speedScale, samples: n, completed: false, meanDistance: 0,
                               seconds: 0, desired: 0 });
    const samples = module._malloc(12 * Math.max(1, n));
    module.HEAPF32.set(path.stroke.flat(), samples >> 2);
    const character = module._lmm_character_create_path(database, samples, n, mode, speedScale, start[0], start[1], start[2]);
    module._free(samples);
    if (!character) {
      status('ready', 'path refused: ' + module.UTF8ToString(module._lmm_last_error()));
      return false;
    }
    path.character = character;
    applyFootLock(module, character);
    path.view = characterView(module, character);
    const s = path.view.scratch >> 2;
    module._lmm_character_path_progress(character, 0, path.view.scratch, 0);
    const count = module.HEAP32[s];
    const points = module._malloc(12 * count);
    module._lmm_character_path_points(character, points, count);
    path.points = module.HEAPF32.slice(points >> 2, (points >> 2) + 3 * count);
    module._free(points);
    path.distanceSum = path.time = 0;
    Object.assign(demo.path, { points: count, end: [path.points[3 * count - 3], path.points[3 * count - 1]] });
    status('following');
    return true;
  };
  // After the path character's update by dt: progress and the running mean distance from `root`.
  path.measure = (root, dt) => {
    const s = path.view.scratch >> 2;
    module._lmm_character_path_progress(path.character, path.view.scratch, 0, path.view.scratch + 4);
    const completed = module.HEAP32[s + 1] !== 0;
    if (!completed) {
      path.distanceSum += distanceToPolyline(root, path.points) * dt;
      path.time += dt;
    }
    Object.assign(demo.path, { desired: module.HEAP32[s], completed, seconds: path.time,
                               meanDistance: path.time > 0 ? path.distanceSum / path.time : 0 });
    return completed;
  };
  // Releases the path character (the keyboard character takes over where it stands).
  path.release = () => {
    module._lmm_character_release(path.character);
    path.view.release();
    path.character = path.view = null;
    status(demo.path.completed ? 'completed' : 'ready', demo.path.completed ? 'draw another path' : 'stopped');
    if (!path.on) demo.path.state = 'off';
  };
  return path;
}

// ?characters=N: N - 1 more characters of the keyboard character's asset (`asset`, a database or a
// model as `controller` says), in a grid 1.5 m apart with the keyboard character `first` at its front
// left corner, all on the page's input, each drawn as a spindle body. update() steps them,
// draw() poses their bodies, centre(root) is where the camera looks (the mean of the roots, the
// keyboard character's `root` among them), shadowRadius and cameraDistance suit the grid.
function createCrowd(module, asset, controller, params, first) {
  const count = Math.max(1, Math.min(256, Math.floor(Number(params.get('characters')) || 1)));
  const side = Math.ceil(Math.sqrt(count)), spacing = 1.5;
  const create = controller === 'database' ? module._lmm_character_create_database : module._lmm_character_create_learned;
  const members = [];
  for (let k = 1; k < count; ++k) {
    const handle = create(asset, (k % side) * -spacing, Math.floor(k / side) * spacing, 0);
    if (!handle) throw new Error(`character ${k + 1} of ${count}: ${module.UTF8ToString(module._lmm_last_error())}`);
    applyFootLock(module, handle);
    members.push({ view: characterView(module, handle), body: null, pose: null });
  }
  demo.characters = count;
  return {
    cameraDistance: count > 1 ? 5 + 1.6 * side : 5,
    shadowRadius: count > 1 ? spacing * side / 2 + 2 : 2.5,
    update(pad, dt) {
      for (const m of members) {
        if (!module._lmm_character_update(m.view.handle, pad, dt)) {
          demo.errors.push('update failed: ' + module.UTF8ToString(module._lmm_last_error()));
        }
      }
    },
    draw(scene, material) {
      for (const m of members) {
        m.pose = readPose(module, m.view);
        if (!m.body) scene.add((m.body = spindleBody(m.pose, material)).object);
        m.body.pose(m.pose);
      }
    },
    centre(root) {
      const [x, z] = members.reduce(([sx, sz], m) => [sx + m.pose.positions[0], sz + m.pose.positions[2]], [root[0], root[2]]);
      return [x / count, 0, z / count];
    },
  };
}

async function main() {
  const params = new URLSearchParams(location.search);
  const controller = params.get('controller') === 'database' ? 'database' : 'learned';
  const url = params.get('asset') || (controller === 'database' ? 'assets/db.mmdb' : 'assets/model.lmmw');
  const module = await createLmmModule();
  const created = await createCharacter(module, controller, url, params);
  let character = created.character, keyboardView = characterView(module, character);
  applyFootLock(module, character);
  addEventListener('keydown', (e) => {
    if (e.code !== 'KeyF' || typing(e) || e.repeat) return;
    demo.footLock = !demo.footLock;
    for (const handle of [character, path.character]) if (handle) applyFootLock(module, handle);
  });
  let clip = null;  // a dropped BVH file playing instead of the characters
  const pad = module._malloc(28);
  demo.controller = controller;
  document.getElementById('controller').textContent = controller;
  document.getElementById('asset').textContent = url.split('/').pop();
  document.getElementById('path-speed').value = kDefaultSpeedScale;
  const canvas = document.getElementById('view');
  const stage = createStage(canvas);
  const crowd = createCrowd(module, controller === 'database' ? created.database : created.model, controller, params, character);
  const camera = { azimuth: Math.PI, elevation: 0.35, distance: crowd.cameraDistance };
  const path = createPathMode(module, created.database, created.dbMessage);
  const gameplay = createGameplay(module, await stagedStates());
  gameplay.attach(character, controller === 'database' ? { kind: 'database', handle: created.database }
                                                      : { kind: 'model', handle: created.model });
  addEventListener('keydown', (e) => { if (!typing(e) && !e.repeat) gameplay.key(e.code); });
  const togglePath = () => {
    path.toggle(!path.on);
    // Path mode starts from higher up, to draw on more of the ground.
    if (path.on) Object.assign(camera, { elevation: Math.max(camera.elevation, 0.9), distance: Math.max(camera.distance, 8) });
  };
  document.getElementById('path-toggle').addEventListener('click', togglePath);
  addEventListener('keydown', (e) => { if (e.code === 'KeyP' && !typing(e) && !e.repeat) togglePath(); });
  let dragging = null, view = null;
  canvas.addEventListener('contextmenu', (e) => e.preventDefault());
  canvas.addEventListener('mousedown', (e) => {
    // In path mode the left button draws (the right one still orbits).
    if (e.button === 0 && path.on && view && path.begin(view, groundPoint(view, e.clientX, e.clientY))) return;
    dragging = [e.clientX, e.clientY];
  });
  addEventListener('mouseup', () => {
    dragging = null;
    if (!path.drawing) return;
    const facing = demo.facingDegrees * Math.PI / 180;
    path.end([demo.root[0], demo.root[2], facing]);
  });
  addEventListener('mousemove', (e) => {
    if (path.drawing) return path.extend(groundPoint(path.drawing.view, e.clientX, e.clientY));
    if (!dragging) return;
    camera.azimuth -= (e.clientX - dragging[0]) * 0.005;
    camera.elevation = Math.min(1.4, Math.max(0.05, camera.elevation + (e.clientY - dragging[1]) * 0.005));
    dragging = [e.clientX, e.clientY];
  });
  // The shown character's body: the worn .glb character when its bones map to the shown joints,
  // else spindles; remade when the shown character (or BVH file) changes.
  const bodyMaterial = new THREE.MeshStandardMaterial({ color: kBodyColor, roughness: 0.65 });
  let worn = null, body = null, bodyOf = null;
  const wear = (source, pose, made) => {
    if (body && bodyOf === source && !made) return;
    if (body) {
      stage.scene.remove(body.object);
      body.dispose();
    }
    body = made;
    if (!body && worn) {
      try {
        body = glbBody(worn, pose);
      } catch (error) {
        body = null;  // this skeleton's joints are not the .glb's: spindles
      }
    }
    body = body || spindleBody(pose, bodyMaterial);
    bodyOf = source;
    stage.scene.add(body.object);
    demo.body = { kind: body.kind, name: body.name, bones: body.bones, mapped: body.mapped, jointsMapped: body.jointsMapped,
                  joints: pose.parents.length };
  };
  // Tests: for `count` vertices spread over the body's mesh, as last drawn: their skinned world
  // position, the world position and rotation of the bone that moves them most, the joint that
  // bone follows and the joint's world position and rotation.
  demo.bodySamples = (count) => {
    const mesh = body.meshes[0], n = mesh.geometry.attributes.position.count, pose = body.drawn, samples = [];
    for (let k = 0; k < count; ++k) {
      const vertex = Math.floor((k + 0.5) * n / count), { bone, joint: j } = body.influence(vertex);
      if (!(j >= 0)) continue;
      const position = mesh.localToWorld(mesh.getVertexPosition(vertex, new THREE.Vector3()));
      samples.push({ vertex: position.toArray(), joint: j, position: bone.getWorldPosition(new THREE.Vector3()).toArray(),
                     rotation: bone.getWorldQuaternion(new THREE.Quaternion()).toArray(),
                     jointPosition: Array.from(pose.positions.slice(3 * j, 3 * j + 3)),
                     jointRotation: Array.from(pose.rotations.slice(4 * j, 4 * j + 4)) });
    }
    return samples;
  };
  // Tests: for each bone of the body's skin that follows a joint, as last drawn: its world position
  // and its joint's.
  demo.bodyBones = () => {
    const bones = body.meshes[0].skeleton.bones, pose = body.drawn, found = [];
    bones.forEach((bone, k) => {
      const j = body.jointOfBone(k);
      if (j >= 0) found.push({ position: bone.getWorldPosition(new THREE.Vector3()).toArray(), joint: j,
                               jointPosition: Array.from(pose.positions.slice(3 * j, 3 * j + 3)) });
    });
    return found;
  };
  // The viewer: a dropped .mmdb or .lmmw becomes the keyboard character's asset (a database also
  // serves path mode), a dropped .bvh plays until Escape, a dropped .glb character is worn by the
  // shown character (and the later ones whose joints it maps). Returns what happened (for the panel).
  let dropped = 0;
  const openFile = async (name, bytes) => {
    const kind = name.toLowerCase().split('.').pop();
    if (kind === 'bvh') {
      clip = bvhClip(parseBvh(new TextDecoder().decode(bytes)), name);
      return `playing ${name} (Escape: back to the character)`;
    }
    if (kind === 'glb') {
      const loaded = await loadCharacter(name, bytes), pose = body.drawn;
      const made = glbBody(loaded, pose);
      worn = loaded;
      wear(bodyOf, pose, made);
      return `${name}: skinned mesh '${loaded.meshName}', ${made.mapped} of ${made.bones} bones mapped by name to ` +
             `${made.jointsMapped} of the character's ${pose.parents.length} joints`;
    }
    if (kind !== 'mmdb' && kind !== 'lmmw') throw new Error(`${name}: drop a .bvh, .glb, .mmdb or .lmmw file`);
    const file = `/dropped-${++dropped}.${kind}`;
    module.FS.writeFile(file, bytes);
    const asset = module.ccall(kind === 'mmdb' ? 'lmm_database_load' : 'lmm_model_load', 'number', ['string'], [file]);
    module.FS.unlink(file);  // loaded into the runtime's own memory
    const failed = () => new Error(`${name}: ${module.UTF8ToString(module._lmm_last_error()).replace(file + ': ', '')}`);
    if (!asset) throw failed();
    const create = kind === 'mmdb' ? module._lmm_character_create_database : module._lmm_character_create_learned;
    const made = create(asset, demo.root[0], demo.root[2], demo.facingDegrees * Math.PI / 180);
    if (!made) throw failed();
    applyFootLock(module, made);
    module._lmm_character_release(character);
    keyboardView.release();
    character = made;
    keyboardView = characterView(module, made);
    gameplay.attach(made, { kind: kind === 'mmdb' ? 'database' : 'model', handle: asset });
    if (kind === 'mmdb') path.setDatabase(asset);
    else module._lmm_model_release(asset);  // the character keeps it
    clip = null;
    demo.controller = kind === 'mmdb' ? 'database' : 'learned';
    document.getElementById('controller').textContent = demo.controller;
    document.getElementById('asset').textContent = name;
    return `${name}: a ${demo.controller} character`;
  };
  demo.openFile = async (name, bytes) => {
    try {
      demo.fileMessage = await openFile(name, bytes);
    } catch (error) {
      demo.fileMessage = String(error.message || error);
    }
    document.getElementById('file').textContent = demo.fileMessage;
    return demo.fileMessage;
  };
  addEventListener('dragover', (e) => e.preventDefault());
  addEventListener('drop', async (e) => {
    e.preventDefault();
    const file = e.dataTransfer.files[0];
    if (file) demo.openFile(file.name, new Uint8Array(await file.arrayBuffer()));
  });
  addEventListener('keydown', (e) => { if (e.code === 'Escape') clip = null; });
  canvas.addEventListener('wheel', (e) => { camera.distance = Math.min(30, Math.max(1.5, camera.distance * Math.exp(e.deltaY * 0.001))); });

  const trail = [];
  const grid = { x: null, z: null, lines: [] };  // the grid around the character's metre cell
  let last = performance.now();
  let heldFacing = null;
  const frame = (now) => {
    const dt = Math.min(1 / 15, Math.max(1 / 240, (now - last) / 1000));
    const workStart = performance.now();
    demo.frameMilliseconds = now - last;
    last = now;
    const gamepad = gamepadControls(currentGamepad());
    const clamp1 = (v) => Math.max(-1, Math.min(1, v));
    const stickX = clamp1((keys.has('KeyD') ? 1 : 0) - (keys.has('KeyA') ? 1 : 0) + gamepad.moveX);
    const stickY = clamp1((keys.has('KeyW') ? 1 : 0) - (keys.has('KeyS') ? 1 : 0) + gamepad.moveY);
    const strafe = keys.has('KeyQ') || gamepad.strafe;
    const run = keys.has('ShiftLeft') || keys.has('ShiftRight') || gamepad.run;
    camera.azimuth -= gamepad.orbitX * 2.5 * dt;
    camera.elevation = Math.min(1.4, Math.max(0.05, camera.elevation + gamepad.orbitY * 1.5 * dt));
    // The camera looks from its orbit position towards the character: azimuth about +Y, 0 = +Z.
    const lookAzimuth = camera.azimuth + Math.PI;
    if (strafe && heldFacing === null) heldFacing = demo.facingDegrees * Math.PI / 180;
    if (!strafe) heldFacing = null;
    const f32 = module.HEAPF32, i32 = module.HEAP32, p = pad >> 2;
    f32[p] = stickX; f32[p + 1] = stickY;
    f32[p + 2] = 0; f32[p + 3] = 0;
    // Strafing faces the held direction: the right stick points there, relative to the camera.
    if (strafe) { f32[p + 2] = Math.sin(heldFacing - lookAzimuth); f32[p + 3] = Math.cos(heldFacing - lookAzimuth); }
    f32[p + 4] = lookAzimuth; i32[p + 5] = strafe ? 1 : 0; f32[p + 6] = run ? 1 : 0;
    // A dropped BVH file or else the path character, while there is one, plays instead of the
    // keyboard character.
    const shown = clip || (path.character ? path.view : keyboardView);
    if (clip && !demo.paused) clip.advance(dt);
    if (!clip && !demo.paused) {
      const t0 = performance.now();
      const ok = module._lmm_character_update(shown.handle, path.character ? 0 : pad, dt);
      const spent = (performance.now() - t0) * 1000;
      if (!ok) demo.errors.push('update failed: ' + module.UTF8ToString(module._lmm_last_error()));
      demo.updates += 1;
      if (shown === keyboardView) gameplay.read(demo.updates);
      demo.updateMicroseconds = demo.updates === 1 ? spent : 0.95 * demo.updateMicroseconds + 0.05 * spent;
    }
    if (!demo.paused) crowd.update(pad, dt);

    const state = clip ? clip.read() : readCharacter(module, shown);
    const { root, joint } = state;
    const [qx, qy, qz, qw] = state.rotation;
    demo.facingDegrees = Math.atan2(2 * (qx * qz + qw * qy), 1 - 2 * (qx * qx + qy * qy)) * 180 / Math.PI;
    if (!demo.paused) demo.speed = Math.hypot(root[0] - demo.root[0], root[2] - demo.root[2]) / dt;
    demo.root = root;
    Object.assign(demo, { counters: state.counters, playing: state.playing, playingLabel: state.playingLabel,
                          contacts: state.inContact });
    if (!demo.paused) trail.push(root);
    if (trail.length > 600) trail.shift();
    if (path.character && !clip && !demo.paused && (path.measure(root, dt) || !path.on)) {
      // Done (or path mode left): the keyboard character takes over at the path character's place.
      module._lmm_character_teleport(character, root[0], root[2], demo.facingDegrees * Math.PI / 180);
      path.release();
    }

    const cx = Math.round(root[0]), cz = Math.round(root[2]);
    if (grid.x !== cx || grid.z !== cz) Object.assign(grid, { x: cx, z: cz, lines: gridLines(cx, cz) });
    const lines = grid.lines.slice();
    const line = (a, b, c) => pushLine(lines, a, b, c);
    for (let k = 1; k < trail.length; ++k) line(trail[k - 1], trail[k], [0.9, 0.7, 0.2]);
    const triangles = [];
    drawPath(triangles, path);
    drawTrajectory(triangles, root, state.trajectory, kDesiredColors);
    drawTrajectory(triangles, root, state.played, kPlayedColors);
    Object.assign(demo, { desired: state.trajectory, played: state.played });
    for (const j of state.inContact) addDisc(triangles, joint(j)[0], joint(j)[2], 0.08, 0.01, kContactColor);
    wear(shown, state.pose, null);
    body.pose(state.pose);
    body.tint(demo.tint);
    crowd.draw(stage.scene, bodyMaterial);
    demo.joints = Array.from({ length: shown.joints - 1 }, (_, k) => joint(k + 1));
    const facing = [Math.sin(demo.facingDegrees * Math.PI / 180), 0, Math.cos(demo.facingDegrees * Math.PI / 180)];
    line([root[0], 0.01, root[2]], [root[0] + 0.5 * facing[0], 0.01, root[2] + 0.5 * facing[2]], [0.3, 0.9, 0.4]);

    const { elevation, distance } = camera;
    const focus = crowd.centre(root);
    const target = [focus[0], 0.9, focus[2]];
    const eye = [target[0] + distance * Math.cos(elevation) * Math.sin(camera.azimuth),
                 target[1] + distance * Math.sin(elevation),
                 target[2] + distance * Math.cos(elevation) * Math.cos(camera.azimuth)];
    // Tinted (tests), the body is drawn alone: no path, trajectory or contact disc over its feet.
    demo.mvp = stage.draw(eye, target, focus, crowd.shadowRadius, demo.tint ? [] : lines, demo.tint ? [] : triangles);
    view = { eye, axes: cameraAxes(eye, target, [0, 1, 0]), aspect: canvas.clientWidth / canvas.clientHeight,
             width: canvas.clientWidth, height: canvas.clientHeight };
    demo.frameWork = performance.now() - workStart;

    updatePanel(run, strafe);
    requestAnimationFrame(frame);
  };
  demo.ready = true;
  path.toggle(false);
  requestAnimationFrame(frame);
}

// Appends to `triangles` a flat ribbon `width` wide at height y along the ground points
// `points` ([x, z] pairs) in `color`.
function addRibbon(triangles, points, width, y, color) {
  for (let k = 1; k < points.length; ++k) {
    const [ax, az] = points[k - 1], [bx, bz] = points[k];
    const length = Math.hypot(bx - ax, bz - az);
    if (length < 1e-5) continue;
    const nx = -(bz - az) / length * width / 2, nz = (bx - ax) / length * width / 2;
    const quad = [[ax + nx, az + nz], [ax - nx, az - nz], [bx - nx, bz - nz], [ax + nx, az + nz], [bx - nx, bz - nz], [bx + nx, bz + nz]];
    for (const [x, z] of quad) triangles.push(x, y, z, ...color);
  }
}

// Appends to `triangles` a flat disc of `radius` at height y around the ground point (x, z).
function addDisc(triangles, x, z, radius, y, color) {
  const at = (k) => [x + radius * Math.cos(k * Math.PI / 6), z + radius * Math.sin(k * Math.PI / 6)];
  for (let k = 0; k < 12; ++k) {
    const [ax, az] = at(k), [bx, bz] = at(k + 1);
    triangles.push(x, y, z, ...color, ax, y, az, ...color, bx, y, bz, ...color);
  }
}

// Appends the stroke being drawn (yellow) or the followed path (red, dim once left; its desired
// point white).
function drawPath(triangles, path) {
  if (path.drawing) {
    addRibbon(triangles, path.stroke.map((s) => [s[1], s[2]]), 0.05, 0.015, [0.95, 0.85, 0.3]);
    return;
  }
  if (!path.points) return;
  const points = path.points, ground = [];
  for (let i = 0; i < points.length; i += 3) ground.push([points[i], points[i + 2]]);
  addRibbon(triangles, ground, 0.06, 0.015, path.character ? [0.9, 0.25, 0.25] : [0.45, 0.2, 0.2]);
  if (path.character) addDisc(triangles, ...ground[demo.path.desired], 0.07, 0.02, [1, 1, 1]);
}

// Colours (ribbon and future discs, past discs, facing ticks) and heights of the two trajectories:
// the desired one (from the input or the path) and the one the played animation predicts.
const kDesiredColors = { line: [0.3, 0.8, 0.95], past: [0.2, 0.4, 0.5], tick: [0.3, 0.95, 0.55], y: 0.025 };
const kPlayedColors = { line: [0.95, 0.45, 0.85], past: [0.5, 0.25, 0.45], tick: [0.95, 0.75, 0.9], y: 0.035 };

// Appends a trajectory in `colors`: a ribbon from the root through its future samples, each
// sample a disc with a tick along its facing (past samples: dim discs).
function drawTrajectory(triangles, root, trajectory, colors) {
  const future = trajectory.filter((s) => s.time > 0), y = colors.y;
  addRibbon(triangles, [[root[0], root[2]], ...future.map((s) => [s.position[0], s.position[2]])], 0.035, y, colors.line);
  for (const sample of trajectory) {
    const [x, , z] = sample.position, f = sample.facing;
    if (sample.time <= 0) {
      addDisc(triangles, x, z, 0.04, y, colors.past);
      continue;
    }
    addDisc(triangles, x, z, 0.05, y + 0.005, colors.line);
    addRibbon(triangles, [[x, z], [x + 0.3 * f[0], z + 0.3 * f[2]]], 0.03, y + 0.005, colors.tick);
  }
}

// Writes the panel's rows.
function updatePanel(run, strafe) {
  const set = (id, text) => { document.getElementById(id).textContent = text; };
  set('gait', run ? 'run' : 'walk');
  set('strafe', strafe ? 'on' : 'off');
  set('speed', demo.speed.toFixed(2) + ' m/s');
  set('update', demo.updateMicroseconds.toFixed(0) + ' us');
  set('frame', demo.frameMilliseconds.toFixed(1) + ' ms');
  set('playing-label', demo.playingLabel);
  set('playing', demo.playing);
  set('searches', `${demo.counters.searches} / ${demo.counters.transitions}`);
  set('contacts', (demo.contacts.length ? demo.contacts.length + ' foot joint(s)' : 'none') +
                  (demo.footLock ? ', locked' : ', lock off'));
  const g = demo.gameplay;
  set('tags', g.tags.length ? g.tags.join(' ') : '-');
  set('state', g.states.length ? `${g.state} (${g.states.map((name, k) => `${k + 5} ${name}`).join(', ')}, 0 none)` : g.state);
  set('action', g.message || (g.action ? 'playing' : '-'));
  set('events', g.events.length ? g.events.slice(-4).map((e) => e.name).join(', ') + ` (${g.eventCount} in all)` : '-');
  const p = demo.path;
  set('path-state', p.message ? `${p.state}: ${p.message}` : p.state);
  set('path-progress', p.points ? `${p.desired} / ${p.points}${p.completed ? ' (done)' : ''}` : '-');
  set('path-distance', p.points ? `${p.meanDistance.toFixed(3)} m over ${p.seconds.toFixed(1)} s` : '-');
}

main().catch((error) => {
  demo.errors.push(String(error && error.message || error));
  document.getElementById('error').textContent = String(error && error.message || error);
  console.error(error);
});
