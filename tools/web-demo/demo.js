// lmmkit browser demo: loads the WebAssembly runtime (lmm.js, the C API of lmm/lmm.h), a model
// bundle (assets/model.lmmw: learned motion matching) or a database (assets/db.mmdb: database
// motion matching, with ?controller=database), drives one character from the keyboard and draws
// it with WebGL2 (flat-shaded bones). window.lmmDemo exposes its state to tests (tests/web/).
'use strict';

const demo = {
  ready: false, errors: [], controller: '', updateMicroseconds: 0, frameMilliseconds: 0, updates: 0,
  root: [0, 0, 0], facingDegrees: 0, speed: 0,
  paused: false,  // tests: keep drawing the last pose without updating
  joints: [],     // world positions [x, y, z] of the drawn joints (the pose on screen)
  mvp: null,      // the view-projection matrix of the last frame (column-major)
};
window.lmmDemo = demo;

const keys = new Set();
addEventListener('keydown', (e) => keys.add(e.code));
addEventListener('keyup', (e) => keys.delete(e.code));
addEventListener('blur', () => keys.clear());

// ---- small vector / matrix helpers (column-major 4x4, as WebGL expects) ----
function perspective(fovY, aspect, near, far) {
  const f = 1 / Math.tan(fovY / 2), d = near - far;
  return [f / aspect, 0, 0, 0, 0, f, 0, 0, 0, 0, (far + near) / d, -1, 0, 0, (2 * far * near) / d, 0];
}
function sub(a, b) { return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]; }
function cross(a, b) { return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]; }
function normalize(a) { const l = Math.hypot(a[0], a[1], a[2]) || 1; return [a[0] / l, a[1] / l, a[2] / l]; }
function dot(a, b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
function lookAt(eye, target, up) {
  const z = normalize(sub(eye, target)), x = normalize(cross(up, z)), y = cross(z, x);
  return [x[0], y[0], z[0], 0, x[1], y[1], z[1], 0, x[2], y[2], z[2], 0, -dot(x, eye), -dot(y, eye), -dot(z, eye), 1];
}
function multiply(a, b) {
  const out = new Array(16).fill(0);
  for (let c = 0; c < 4; ++c) for (let r = 0; r < 4; ++r) for (let k = 0; k < 4; ++k) out[c * 4 + r] += a[k * 4 + r] * b[c * 4 + k];
  return out;
}

// ---- bones: flat-shaded octahedra from a joint to its child ----
const kLight = normalize([0.4, 0.8, 0.3]);
const kBoneColor = [0.55, 0.62, 0.78];

// Appends to `triangles` the octahedron of the bone from `a` to `b` (its widest ring a fifth of the
// way, radius an eighth of its length up to 5 cm), each face shaded by its angle to the light.
function addBone(triangles, a, b) {
  const d = sub(b, a), length = Math.hypot(d[0], d[1], d[2]);
  if (length < 1e-4) return;
  const axis = [d[0] / length, d[1] / length, d[2] / length];
  const side = normalize(cross(axis, Math.abs(axis[1]) < 0.9 ? [0, 1, 0] : [1, 0, 0]));
  const other = cross(axis, side);
  const radius = Math.min(0.05, length / 8);
  const ring = [0, 1, 2, 3].map((k) => {
    const c = Math.cos(Math.PI / 2 * k) * radius, s = Math.sin(Math.PI / 2 * k) * radius;
    return [0, 1, 2].map((i) => a[i] + 0.2 * d[i] + c * side[i] + s * other[i]);
  });
  const middle = [0, 1, 2].map((i) => a[i] + 0.5 * d[i]);
  const face = (p, q, r) => {
    let n = normalize(cross(sub(q, p), sub(r, p)));
    const centre = [0, 1, 2].map((i) => (p[i] + q[i] + r[i]) / 3);
    if (dot(n, sub(centre, middle)) < 0) n = [-n[0], -n[1], -n[2]];
    const shade = 0.35 + 0.65 * Math.max(0, dot(n, kLight));
    for (const v of [p, q, r]) triangles.push(v[0], v[1], v[2], ...kBoneColor.map((c) => c * shade));
  };
  for (let k = 0; k < 4; ++k) {
    face(a, ring[k], ring[(k + 1) % 4]);
    face(b, ring[(k + 1) % 4], ring[k]);
  }
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

// ---- WebGL2: one program for coloured lines and triangles ----
function createRenderer(canvas) {
  const gl = canvas.getContext('webgl2', { antialias: true });
  if (!gl) throw new Error('WebGL2 is not available in this browser');
  const compile = (type, source) => {
    const shader = gl.createShader(type);
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(shader));
    return shader;
  };
  const program = gl.createProgram();
  gl.attachShader(program, compile(gl.VERTEX_SHADER, `#version 300 es
    uniform mat4 mvp; in vec3 position; in vec3 color; out vec3 v_color;
    void main() { gl_Position = mvp * vec4(position, 1.0); v_color = color; }`));
  gl.attachShader(program, compile(gl.FRAGMENT_SHADER, `#version 300 es
    precision mediump float; in vec3 v_color; out vec4 fragment;
    void main() { fragment = vec4(v_color, 1.0); }`));
  gl.linkProgram(program);
  if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(program));
  const buffer = gl.createBuffer();
  const vao = gl.createVertexArray();
  gl.bindVertexArray(vao);
  gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
  for (const [name, offset] of [['position', 0], ['color', 12]]) {
    const at = gl.getAttribLocation(program, name);
    gl.enableVertexAttribArray(at);
    gl.vertexAttribPointer(at, 3, gl.FLOAT, false, 24, offset);
  }
  return {
    // Draws `lines` and `triangles` (depth-tested), then `overlay` lines over them, each a flat
    // array of x y z r g b per vertex, with `mvp`.
    draw(mvp, lines, triangles, overlay) {
      gl.viewport(0, 0, canvas.width, canvas.height);
      gl.clearColor(0.11, 0.13, 0.15, 1);
      gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
      gl.useProgram(program);
      gl.uniformMatrix4fv(gl.getUniformLocation(program, 'mvp'), false, new Float32Array(mvp));
      gl.bindVertexArray(vao);
      gl.bindBuffer(gl.ARRAY_BUFFER, buffer);
      gl.enable(gl.DEPTH_TEST);
      for (const [mode, vertices] of [[gl.LINES, lines], [gl.TRIANGLES, triangles], [null, overlay]]) {
        if (mode === null) gl.disable(gl.DEPTH_TEST);
        gl.bufferData(gl.ARRAY_BUFFER, new Float32Array(vertices), gl.STREAM_DRAW);
        gl.drawArrays(mode === null ? gl.LINES : mode, 0, vertices.length / 6);
      }
    },
  };
}

// ---- the runtime ----
async function fetchBytes(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`cannot load ${url}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// A character of `controller` ('learned' or 'database') over the asset at `url`.
async function createCharacter(module, controller, url) {
  const file = controller === 'database' ? '/asset.mmdb' : '/asset.lmmw';
  module.FS.writeFile(file, await fetchBytes(url));
  const asset = module.ccall(controller === 'database' ? 'lmm_database_load' : 'lmm_model_load', 'number', ['string'], [file]);
  if (!asset) throw new Error(`${url}: ${module.UTF8ToString(module._lmm_last_error())}`);
  const create = controller === 'database' ? module._lmm_character_create_database : module._lmm_character_create_learned;
  const character = create(asset, 0, 0, 0);
  if (!character) throw new Error(`${url}: ${module.UTF8ToString(module._lmm_last_error())}`);
  return character;
}

async function main() {
  const params = new URLSearchParams(location.search);
  const controller = params.get('controller') === 'database' ? 'database' : 'learned';
  const url = params.get('asset') || (controller === 'database' ? 'assets/db.mmdb' : 'assets/model.lmmw');
  const module = await createLmmModule();
  const character = await createCharacter(module, controller, url);
  const joints = module._lmm_character_joint_count(character);
  const parents = Array.from({ length: joints }, (_, j) => module._lmm_character_joint_parent(character, j));
  const pad = module._malloc(28);
  const positions = module._malloc(12 * joints);
  const rotations = module._malloc(16 * joints);
  const rootOut = module._malloc(16);
  demo.controller = controller;
  document.getElementById('controller').textContent = controller;
  document.getElementById('asset').textContent = url.split('/').pop();

  const canvas = document.getElementById('view');
  const renderer = createRenderer(canvas);
  const camera = { azimuth: Math.PI, elevation: 0.35, distance: 5 };
  let dragging = null;
  canvas.addEventListener('mousedown', (e) => { dragging = [e.clientX, e.clientY]; });
  addEventListener('mouseup', () => { dragging = null; });
  addEventListener('mousemove', (e) => {
    if (!dragging) return;
    camera.azimuth -= (e.clientX - dragging[0]) * 0.005;
    camera.elevation = Math.min(1.4, Math.max(0.05, camera.elevation + (e.clientY - dragging[1]) * 0.005));
    dragging = [e.clientX, e.clientY];
  });
  canvas.addEventListener('wheel', (e) => { camera.distance = Math.min(30, Math.max(1.5, camera.distance * Math.exp(e.deltaY * 0.001))); });

  const trail = [];
  const grid = { x: null, z: null, lines: [] };  // the grid around the character's metre cell
  let last = performance.now();
  let heldFacing = null;
  const frame = (now) => {
    const dt = Math.min(1 / 15, Math.max(1 / 240, (now - last) / 1000));
    demo.frameMilliseconds = now - last;
    last = now;
    const stickX = (keys.has('KeyD') ? 1 : 0) - (keys.has('KeyA') ? 1 : 0);
    const stickY = (keys.has('KeyW') ? 1 : 0) - (keys.has('KeyS') ? 1 : 0);
    const strafe = keys.has('KeyQ');
    const run = keys.has('ShiftLeft') || keys.has('ShiftRight');
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
    if (!demo.paused) {
      const t0 = performance.now();
      const ok = module._lmm_character_update(character, pad, dt);
      const spent = (performance.now() - t0) * 1000;
      if (!ok) demo.errors.push('update failed: ' + module.UTF8ToString(module._lmm_last_error()));
      demo.updates += 1;
      demo.updateMicroseconds = demo.updates === 1 ? spent : 0.95 * demo.updateMicroseconds + 0.05 * spent;
    }

    module._lmm_character_world_transforms(character, positions, rotations, joints);
    module._lmm_character_root_position(character, rootOut);
    const heap = module.HEAPF32;
    const root = [heap[rootOut >> 2], heap[(rootOut >> 2) + 1], heap[(rootOut >> 2) + 2]];
    module._lmm_character_root_rotation(character, rootOut);
    const [qx, qy, qz, qw] = [0, 1, 2, 3].map((k) => heap[(rootOut >> 2) + k]);
    demo.facingDegrees = Math.atan2(2 * (qx * qz + qw * qy), 1 - 2 * (qx * qx + qy * qy)) * 180 / Math.PI;
    if (!demo.paused) demo.speed = Math.hypot(root[0] - demo.root[0], root[2] - demo.root[2]) / dt;
    demo.root = root;
    if (!demo.paused) trail.push(root);
    if (trail.length > 600) trail.shift();

    const cx = Math.round(root[0]), cz = Math.round(root[2]);
    if (grid.x !== cx || grid.z !== cz) Object.assign(grid, { x: cx, z: cz, lines: gridLines(cx, cz) });
    const lines = grid.lines.slice();
    const line = (a, b, c) => pushLine(lines, a, b, c);
    for (let k = 1; k < trail.length; ++k) line(trail[k - 1], trail[k], [0.9, 0.7, 0.2]);
    const joint = (j) => [heap[(positions >> 2) + 3 * j], heap[(positions >> 2) + 3 * j + 1], heap[(positions >> 2) + 3 * j + 2]];
    const triangles = [], overlay = [];
    for (let j = 1; j < joints; ++j) {
      if (parents[j] < 1) continue;
      const a = joint(parents[j]), b = joint(j);
      addBone(triangles, a, b);
      pushLine(overlay, a, b, [0.85, 0.9, 1.0]);
    }
    demo.joints = Array.from({ length: joints - 1 }, (_, k) => joint(k + 1));
    const facing = [Math.sin(demo.facingDegrees * Math.PI / 180), 0, Math.cos(demo.facingDegrees * Math.PI / 180)];
    line([root[0], 0.01, root[2]], [root[0] + 0.5 * facing[0], 0.01, root[2] + 0.5 * facing[2]], [0.3, 0.9, 0.4]);

    const width = Math.round(canvas.clientWidth * devicePixelRatio);
    const height = Math.round(canvas.clientHeight * devicePixelRatio);
    if (canvas.width !== width || canvas.height !== height) Object.assign(canvas, { width, height });
    const target = [root[0], 0.9, root[2]];
    const eye = [target[0] + camera.distance * Math.cos(camera.elevation) * Math.sin(camera.azimuth),
                 target[1] + camera.distance * Math.sin(camera.elevation),
                 target[2] + camera.distance * Math.cos(camera.elevation) * Math.cos(camera.azimuth)];
    const mvp = multiply(perspective(0.9, canvas.width / canvas.height, 0.05, 200), lookAt(eye, target, [0, 1, 0]));
    renderer.draw(mvp, lines, triangles, overlay);
    demo.mvp = mvp;

    document.getElementById('gait').textContent = run ? 'run' : 'walk';
    document.getElementById('strafe').textContent = strafe ? 'on' : 'off';
    document.getElementById('speed').textContent = demo.speed.toFixed(2) + ' m/s';
    document.getElementById('update').textContent = demo.updateMicroseconds.toFixed(0) + ' us';
    document.getElementById('frame').textContent = demo.frameMilliseconds.toFixed(1) + ' ms';
    requestAnimationFrame(frame);
  };
  demo.ready = true;
  requestAnimationFrame(frame);
}

main().catch((error) => {
  demo.errors.push(String(error && error.message || error));
  document.getElementById('error').textContent = String(error && error.message || error);
  console.error(error);
});
