/* lmmkit C API (C99) for engine plugins and other languages: opaque handles over the C++ runtime,
 * caller-owned output buffers, per-thread error strings and a pluggable allocator.
 *
 * Conventions (as the C++ runtime): metres, seconds, radians; Y up, right-handed; a character's
 * joint 0 is its root on the ground (the simulation bone), facing +Z in character space.
 * Functions returning int give 1 on success and 0 on failure; then lmm_last_error() says why.
 * Handles are independent: distinct characters may be updated on different threads at once
 * (assets are immutable and shared). A released asset stays alive while a character uses it.
 *
 * Handle checks: the library keeps every live handle with its kind. A call given a released
 * handle (also a second release, or a crowd's character after lmm_crowd_release), a handle of
 * another kind (a database where a model is expected) or a pointer the library never returned
 * fails with a message in lmm_last_error() instead of touching memory; a release function given
 * one does nothing but set that message. (A stale pointer whose memory was reused by a newer
 * handle of the same kind names that newer handle: drop pointers when you release them.)
 * Placements (x, z, heading, roots) must be finite: a NaN or an infinity fails the call. A
 * non-finite dt or gamepad value is what the C++ runtime makes of it (docs/runtime.md): dt a tiny
 * step, a stick value zero, counted in the character's stats.
 */
#ifndef LMM_LMM_H
#define LMM_LMM_H

#include <stddef.h>
#include <stdint.h>

/* LMM_API marks every function of the C API: liblmmkit.so exports them, and the WebAssembly build
 * takes its export list from the declarations so marked (tools/web-demo/CMakeLists.txt). */
#if defined(__GNUC__) || defined(__clang__)
#define LMM_API __attribute__((visibility("default")))
#else
#define LMM_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A loaded motion database (*.mmdb) with its search index. */
typedef struct lmm_database lmm_database;
/* A loaded model bundle (*.lmmw). */
typedef struct lmm_model lmm_model;
/* One animated character (database or learned motion matching). */
typedef struct lmm_character lmm_character;
/* Many characters over one asset, updated together (learned crowds batch their networks). */
typedef struct lmm_crowd lmm_crowd;

/* Memory for the handles, the loaded files and their bookkeeping. Blocks are requested with
 * an alignment of at most 64 bytes; release gets the size that was requested. */
typedef struct lmm_allocator {
  void* (*allocate)(void* user, size_t size, size_t alignment);
  void (*release)(void* user, void* block, size_t size);
  void* user;
} lmm_allocator;

/* Gamepad input of one update. Sticks in [-1, 1] (x right, y forward). */
typedef struct lmm_gamepad {
  float left_x, left_y;   /* movement */
  float right_x, right_y; /* facing while strafing */
  float camera_azimuth;   /* radians about +Y; 0 = camera looking along +Z */
  int strafe;             /* non-zero: face the camera / right stick instead of the motion */
  float gait;             /* 0 = walk speeds .. 1 = run speeds */
} lmm_gamepad;

/* The runtime's version, "MAJOR.MINOR.PATCH". */
LMM_API const char* lmm_version(void);

/* The last error message of the calling thread ("" when there was none). */
LMM_API const char* lmm_last_error(void);

/* Uses `allocator` for every later allocation of this API (NULL: malloc / free). Call it before
 * creating any handle; handles must be released with the allocator they were made with. The
 * runtime's own per-character buffers (allocated once, at creation) use C++'s operator new. */
LMM_API void lmm_set_allocator(const lmm_allocator* allocator);

/* Most workers (sets of batch scratch) a learned crowd may have. */
#define LMM_MAX_CROWD_WORKERS 256

/* Loads and validates a motion database and builds its search index; NULL on failure. Only
 * regular files are read (not a directory, FIFO or device). */
LMM_API lmm_database* lmm_database_load(const char* path);
/* Releases the caller's reference (NULL is ignored); characters keep what they use alive. */
LMM_API void lmm_database_release(lmm_database* database);
/* Process-unique id of the loaded asset (0 when `database` is not a live database handle). */
LMM_API uint64_t lmm_database_id(const lmm_database* database);

/* Number of frame tags of the database (0 when it has none, or on failure). */
LMM_API int lmm_database_tag_count(const lmm_database* database);
/* Name of tag `tag` (its bit in a tag mask: 1 << tag; valid while the database lives), or NULL
 * when out of range. */
LMM_API const char* lmm_database_tag_name(const lmm_database* database, int tag);
/* The tag mask of the comma-separated tag names in `names` ("" or NULL: 0); fails naming the
 * first unknown tag. Resolve masks once (this may allocate), use them per frame. */
LMM_API int lmm_database_tag_mask(const lmm_database* database, const char* names, uint64_t* mask);
/* Number of distinct event names of the database (0 when it has none, or on failure). */
LMM_API int lmm_database_event_name_count(const lmm_database* database);
/* Event name `name` (an lmm_event's name; valid while the database lives), or NULL when out of
 * range. */
LMM_API const char* lmm_database_event_name(const lmm_database* database, int name);

/* Loads and validates a model bundle; NULL on failure. Only regular files are read. */
LMM_API lmm_model* lmm_model_load(const char* path);
/* Releases the caller's reference (NULL is ignored); characters keep what they use alive. */
LMM_API void lmm_model_release(lmm_model* model);
/* Process-unique id of the loaded asset (0 when `model` is not a live model handle). */
LMM_API uint64_t lmm_model_id(const lmm_model* model);
/* Number of tags the model's states carry (0 for a bundle trained without [tags], or on failure). */
LMM_API int lmm_model_tag_count(const lmm_model* model);
/* Name of the model's tag `tag` (bit 1 << tag of its masks; valid while the model lives), or NULL. */
LMM_API const char* lmm_model_tag_name(const lmm_model* model, int tag);
/* lmm_database_tag_mask over the model's tags. */
LMM_API int lmm_model_tag_mask(const lmm_model* model, const char* names, uint64_t* mask);
/* The tags lmm_character_play_action can play on the model's learned characters (its preset's
 * [tags] actions; bits over lmm_model_tag_name) into *actions, and those its free projections leave
 * out into *kept_out (NULL: not wanted); 1, or 0 for a bad handle or a NULL `actions`. */
LMM_API int lmm_model_action_tags(const lmm_model* model, uint64_t* actions, uint64_t* kept_out);
/* Number of event names of a learned character of the model: the contact joints' foot plants,
 * then per tag its entering and leaving (0 on failure). */
LMM_API int lmm_model_event_name_count(const lmm_model* model);
/* Event name `name` of the model (an lmm_event's name from a learned character), or NULL. */
LMM_API const char* lmm_model_event_name(const lmm_model* model, int name);

/* A database motion-matching character at (x, 0, z) facing `heading` radians about +Y (all
 * finite); NULL on failure. */
LMM_API lmm_character* lmm_character_create_database(const lmm_database* database, float x, float z, float heading);
/* A learned motion-matching character (no database needed); NULL on failure. */
LMM_API lmm_character* lmm_character_create_learned(const lmm_model* model, float x, float z, float heading);

/* Where a drawn path is put (Lee, Kwon & Lee 2023 Sec. VII): the `mode` of lmm_character_create_path. */
typedef enum lmm_path_mode {
  LMM_PATH_LOCAL = 0, /* translated so that it starts at the character */
  LMM_PATH_GLOBAL = 1 /* kept where it was drawn; a walk from the character to its start comes first */
} lmm_path_mode;
/* A database character that follows a drawn path with long-horizon motion matching, LHMM(3, 3)
 * (Lee, Kwon & Lee 2023), starting at (x, 0, z) facing `heading`. `samples_txz` holds `count`
 * samples of 3 floats: time (s, strictly increasing), x and z (metres); the path is played at
 * speed_scale x the drawing speed (the paper uses 0.2), resampled at the database's rate and
 * smoothed. Its update ignores the input (NULL allowed); reset, teleport and the root contract
 * calls fail on it. NULL on failure, with a message naming the sample at fault. */
LMM_API lmm_character* lmm_character_create_path(const lmm_database* database, const float* samples_txz, size_t count,
                                                 int mode, float speed_scale, float x, float z, float heading);
/* Progress of a path character: the desired path point (Lee, Kwon & Lee 2023 Eq. 1), the number
 * of path points and whether the desired point reached the last (1 / 0); any pointer may be NULL.
 * Fails on other characters. */
LMM_API int lmm_character_path_progress(const lmm_character* character, int* desired_index, int* point_count,
                                        int* completed);
/* The path points a path character follows (placed and smoothed, one per database frame of
 * playback; 3 floats each, y = 0). Fails when `point_capacity` is below the point count. */
LMM_API int lmm_character_path_points(const lmm_character* character, float* points_xyz, size_t point_capacity);
/* Destroys a character (NULL is ignored; a crowd's character is not released, and
 * lmm_last_error() says so). */
LMM_API void lmm_character_release(lmm_character* character);

/* Advances one character by dt seconds (no allocation); fails on a crowd's character. A path
 * character ignores `input` (NULL allowed); other characters need it. */
LMM_API int lmm_character_update(lmm_character* character, const lmm_gamepad* input, float dt);
/* Advances characters[i] with inputs[i] for every i in [begin, end): a job system splits a crowd
 * into ranges and runs them on its own threads (no allocation). Path characters ignore inputs[i].
 * Every handle of the range is checked before any character moves. */
LMM_API int lmm_characters_update(lmm_character* const* characters, const lmm_gamepad* inputs, size_t begin, size_t end,
                                  float dt);

/* Back to the state creation left, at (x, 0, z) facing `heading`, counters cleared (no
 * allocation). */
LMM_API int lmm_character_reset(lmm_character* character, float x, float z, float heading);
/* Moves the character rigidly to (x, 0, z) facing `heading`: pose, transition and predicted
 * trajectory move with it, foot locks are released (no allocation). */
LMM_API int lmm_character_teleport(lmm_character* character, float x, float z, float heading);

/* Who moves the root between updates (the root contract). */
typedef enum lmm_root_owner {
  LMM_ROOT_LIBRARY = 0, /* update integrates root motion, pulled towards the simulated root */
  LMM_ROOT_GAME = 1     /* the game applies lmm_character_root_motion and calls lmm_character_set_root */
} lmm_root_owner;
/* Turns foot locking on (1) or off (0) for a character of any kind (off at creation): from the
 * next update, each contact joint the character's contacts label in contact stays where it was
 * shown, the leg bending by two-joint IK (Lee, Kwon & Lee 2023 App. A), the heel lifting and the
 * pelvis going down (at most 5 cm) where the leg is too short; a lock out of reach, or further
 * than `unlock_distance` metres from the animated joint, is dragged after it. When the contact
 * ends the foot's offset fades with a spring of `blend_halflife` seconds. 0 for either takes its
 * default (0.25 m, 0.03 s); turning locking off releases every lock at once. Fails on a negative
 * or non-finite value (no allocation). */
LMM_API int lmm_character_set_foot_lock(lmm_character* character, int on, float unlock_distance, float blend_halflife);
/* Sets the root contract of a character (LMM_ROOT_LIBRARY at creation). */
LMM_API int lmm_character_set_root_owner(lmm_character* character, lmm_root_owner owner);
/* The root displacement of the last update: world translation (3 floats) and the turn
 * (x, y, z, w; facing after = turn * facing before); either pointer may be NULL. */
LMM_API int lmm_character_root_motion(const lmm_character* character, float translation_xyz[3], float turn_xyzw[4]);
/* The game's root for the next update (LMM_ROOT_GAME): position and facing (x, y, z, w). */
LMM_API int lmm_character_set_root(lmm_character* character, const float position_xyz[3], const float rotation_xyzw[4]);

/* Number of joints of the character's skeleton (joint 0 = root). */
LMM_API int lmm_character_joint_count(const lmm_character* character);
/* Index of the joint named `name`, or -1. */
LMM_API int lmm_character_joint_index(const lmm_character* character, const char* name);
/* Name of joint `joint` (valid while the character lives), or NULL when out of range. */
LMM_API const char* lmm_character_joint_name(const lmm_character* character, int joint);
/* Parent index of joint `joint` (-1 for the root), or -2 when out of range. */
LMM_API int lmm_character_joint_parent(const lmm_character* character, int joint);

/* World position of the character root. */
LMM_API int lmm_character_root_position(const lmm_character* character, float out_xyz[3]);
/* Facing of the character root as an x, y, z, w quaternion. */
LMM_API int lmm_character_root_rotation(const lmm_character* character, float out_xyzw[4]);
/* World transforms of every joint: positions (3 floats each) and rotations as x, y, z, w
 * quaternions (4 floats each); either pointer may be NULL. `joint_capacity` is the number of
 * joints the buffers hold; fails when it is below the joint count. */
LMM_API int lmm_character_world_transforms(const lmm_character* character, float* positions_xyz, float* rotations_xyzw,
                                           size_t joint_capacity);
/* World transforms of every joint as 4x4 column-major matrices (16 floats each, translation in
 * elements 12..14). */
LMM_API int lmm_character_world_matrices(const lmm_character* character, float* matrices, size_t joint_capacity);

/* Number of samples of the character's desired trajectory (the schema's trajectory offsets). */
LMM_API int lmm_character_trajectory_count(const lmm_character* character);
/* The desired trajectory in world space: the trajectory predicted from the input (gamepad
 * characters) or the query revised against the path by the last match (path characters). Per
 * sample its time offset from now (s; negative: past), position (3 floats) and facing (x, y, z,
 * w); any pointer may be NULL. Fails when `capacity` is below the sample count. */
LMM_API int lmm_character_trajectory(const lmm_character* character, float* times, float* positions_xyz,
                                     float* rotations_xyzw, size_t capacity);
/* The trajectory the played animation predicts, in world space from the character's root: the
 * trajectory features of the database frame being played (database and path characters) or of the
 * learned state being decoded (learned characters). Per sample (the same samples as
 * lmm_character_trajectory) its time offset from now (s), position (3 floats) and unit facing
 * direction (3 floats; zero where the schema has no direction at that offset); any pointer may be
 * NULL. Fails when `capacity` is below the sample count or the schema has over 64 samples. No
 * allocation. */
LMM_API int lmm_character_played_trajectory(const lmm_character* character, float* times, float* positions_xyz,
                                            float* directions_xyz, size_t capacity);
/* Number of contact joints (the asset's foot-contact labels). */
LMM_API int lmm_character_contact_count(const lmm_character* character);
/* Contact label k: the joint it belongs to and whether it is in contact in the pose shown (1 / 0);
 * either pointer may be NULL. Fails when k is out of range. */
LMM_API int lmm_character_contact(const lmm_character* character, int k, int* joint, int* in_contact);

/* Counters of a character since its creation (or reset). Fields are only ever appended; lmmkit
 * 0.x keeps no binary compatibility, so rebuild against the header of the library you load. */
typedef struct lmm_counters {
  int updates;
  int searches;             /* database searches, projector calls (learned) or LHMM matches (path) */
  int transitions;          /* jumps to another frame or state */
  int constraint_searches;  /* database: searches because the tag constraint changed or was about to be left */
  int unsatisfied_searches; /* database: searches that found no frame the tag constraint allows */
} lmm_counters;
/* The character's counters. */
LMM_API int lmm_character_counters(const lmm_character* character, lmm_counters* out);
/* The database frame being played and the index of its clip (database and path characters);
 * either pointer may be NULL. Fails on a learned character. */
LMM_API int lmm_character_frame(const lmm_character* character, int* frame, int* clip);
/* Name of clip `clip` of the character's database (valid while the character lives), or NULL when
 * out of range or for a learned character. */
LMM_API const char* lmm_character_clip_name(const lmm_character* character, int clip);
/* The decoder experts routed for the pose shown (learned characters whose decoder is a mixture of
 * experts, Kleanthous & Martini 2023): up to `capacity` expert indices, best first, and their
 * weights (either pointer may be NULL). Returns the number written (the decoder's top-k, at most
 * `capacity`), 0 on failure. No allocation; not while another thread updates the character. */
LMM_API int lmm_character_decoder_experts(lmm_character* character, int* experts, float* weights, int capacity);

/* Gameplay control of database and learned characters (docs/c-api.md#gameplay-control): tag
 * constraints, events, one-shot actions and game states. A learned character's tags are its
 * model's (lmm_model_tag_mask; a bundle trained with [tags]), a database character's its
 * database's. Path characters take the five constraint calls below (lmm_character_set_constraint_masks
 * to lmm_character_constraint_held): their LHMM searches honour the constraint at every level; the
 * other calls fail on them, and lmm_character_play_action_frames on learned ones. A crowd's
 * characters take them, each its own. None allocates on success unless it says so. */

/* lmm_event.name of the event that ends a one-shot action (not an index of the database's names). */
#define LMM_ACTION_END_EVENT (-1)
/* An event marker the last update played. */
typedef struct lmm_event {
  int name;   /* index into the database's event names (lmm_database_event_name; a learned character:
                 the model's, lmm_model_event_name), or LMM_ACTION_END_EVENT */
  int frame;  /* database frame of the marker (-1 for a learned character) */
  float time; /* seconds into the update at which its frame was played */
} lmm_event;

/* The tag constraint searches honour from the next update on: frames with every tag of
 * `require_all`, at least one of `require_any` (when not 0) and none of `exclude` (masks of
 * lmm_database_tag_mask; all 0: every frame). The next update searches; when no frame is allowed
 * the character keeps playing (lmm_character_constraint_held says so, counters count it). */
LMM_API int lmm_character_set_constraint_masks(lmm_character* character, uint64_t require_all, uint64_t require_any,
                                               uint64_t exclude);
/* lmm_character_set_constraint_masks from comma-separated tag names (NULL or "": none); fails
 * naming the first unknown tag, changing nothing. Resolving names may allocate: per frame, use
 * masks. */
LMM_API int lmm_character_set_constraint(lmm_character* character, const char* require_all, const char* require_any,
                                         const char* exclude);
/* The constraint the game set (a database character's idle adds its own while the stick rests);
 * any pointer may be NULL. */
LMM_API int lmm_character_constraint(const lmm_character* character, uint64_t* require_all, uint64_t* require_any,
                                     uint64_t* exclude);
/* The tags of the frame being played (a learned character: of the state played; 0 without tags). */
LMM_API int lmm_character_tags(const lmm_character* character, uint64_t* tags);
/* 1 when the constraint allows the frame being played, 0 when not, -1 on failure. */
LMM_API int lmm_character_constraint_held(const lmm_character* character);
/* 1 when the character idles (stick released, the database's standing frames required), 0 when
 * not, -1 on failure. */
LMM_API int lmm_character_idle(const lmm_character* character);
/* The event markers of the frames the last update played, in order, each once (an action that
 * ended adds an LMM_ACTION_END_EVENT last): writes up to `capacity` to `out` (NULL allowed when
 * `capacity` is 0) and returns how many there were (more than `capacity`: the rest are lost), -1
 * on failure. */
LMM_API int lmm_character_events(const lmm_character* character, lmm_event* out, int capacity);

/* Plays, as a one-shot action, the run of consecutive frames of one clip that holds every tag of
 * the comma-separated `tags` and whose first pose is closest to the pose played: an inertialized
 * transition now, the frames in order without searching, an LMM_ACTION_END_EVENT in the update
 * that reaches the last, motion matching under the constraint after. A learned character projects
 * under "every tag of `tags`" in the next update and plays on until the run of its action tag ends
 * (a bundle trained with [tags] actions). `in_place` non-zero keeps the root where the action
 * starts (else it moves with the action); `interruptible` non-zero lets a stick push end it. Fails,
 * changing nothing, for no or unknown tags or when no frame has them (a learned character: no
 * action tag among them). Resolves the names (may allocate) and scans the database once. */
LMM_API int lmm_character_play_action(lmm_character* character, const char* tags, int in_place, int interruptible);
/* lmm_character_play_action over database frames first..last (one clip); fails, changing nothing,
 * when they are not in one clip. */
LMM_API int lmm_character_play_action_frames(lmm_character* character, int first, int last, int in_place,
                                             int interruptible);
/* Ends the playing action (the next update reports its LMM_ACTION_END_EVENT and searches); nothing
 * happens without one. */
LMM_API int lmm_character_cancel_action(lmm_character* character);
/* 1 while an action plays, 0 when none does, -1 on failure. */
LMM_API int lmm_character_action_playing(const lmm_character* character);
/* Seconds until the playing action ends (a database character: its last frame at the database's
 * rate; a learned one: the entered state's seconds left in the action's run, from the update
 * after lmm_character_play_action on); 0 without an action, -1 on failure. */
LMM_API float lmm_character_action_seconds_left(const lmm_character* character);

/* Defines the game states lmm_character_set_state switches among, from the [states.NAME] tables
 * of a controller config's text (docs/configs.md#controller-configs; its [speeds] and [springs]
 * are not applied), replacing earlier ones; no state is set after it. Fails, changing nothing,
 * with a message naming the line, or the state and the tag the database lacks. Allocates: call
 * at load time. */
LMM_API int lmm_character_set_states(lmm_character* character, const char* controller_config);
/* Switches to state `name`: its constraint (as lmm_character_set_constraint), transition cost
 * and whether a released stick idles. Fails, changing nothing, when no state has that name. */
LMM_API int lmm_character_set_state(lmm_character* character, const char* name);
/* The name of the state set last ("" before any; valid until the next lmm_character_set_states),
 * or NULL on failure. */
LMM_API const char* lmm_character_state(const lmm_character* character);

/* A crowd of `count` database characters at the origin facing +Z (place them with
 * lmm_character_reset on lmm_crowd_character); their periodic searches are spread over the search
 * interval. NULL on failure. */
LMM_API lmm_crowd* lmm_crowd_create_database(const lmm_database* database, size_t count);
/* A crowd of `count` learned characters whose networks run batched across characters, with
 * `workers` sets of batch scratch (1 to min(count, LMM_MAX_CROWD_WORKERS)): one per
 * lmm_crowd_update call that may run at once. NULL on failure. */
LMM_API lmm_crowd* lmm_crowd_create_learned(const lmm_model* model, size_t count, int workers);
/* Destroys a crowd and its characters (NULL is ignored). */
LMM_API void lmm_crowd_release(lmm_crowd* crowd);
/* Number of characters (0 for NULL). */
LMM_API size_t lmm_crowd_size(const lmm_crowd* crowd);
/* Character i of the crowd, owned by it (valid while the crowd lives; never release it): every
 * lmm_character_* call works on it except the updates (lmm_crowd_update updates it). NULL when
 * i is out of range. */
LMM_API lmm_character* lmm_crowd_character(lmm_crowd* crowd, size_t i);
/* The input character i follows from the next update on. */
LMM_API int lmm_crowd_set_input(lmm_crowd* crowd, size_t i, const lmm_gamepad* input);
/* Updates the characters of ranks [begin, end) (see lmm_crowd_set_priorities; rank = index until
 * then; begin <= end <= lmm_crowd_size) by dt with batch scratch `worker` (0 .. workers -
 * 1; 0 for database crowds). Calls over disjoint ranges with distinct workers may run on
 * different threads at once; a call whose ranks overlap those of a call in progress, or that uses
 * a learned crowd's worker in use, fails and updates nothing. With budget_seconds > 0, the characters not reached when
 * that much time has passed are deferred to the next call (made up with the summed dt). No
 * allocation. */
LMM_API int lmm_crowd_update(lmm_crowd* crowd, size_t begin, size_t end, float dt, int worker, double budget_seconds);
/* Level of detail: character i updates every `divisor`-th crowd update (1..16) with the summed dt
 * (in equal steps of at most 0.25 s where the sum is longer). */
LMM_API int lmm_crowd_set_rate_divisor(lmm_crowd* crowd, size_t i, int divisor);
/* Update order: `count` (= lmm_crowd_size) priorities, higher first, so a budget defers the least
 * important characters. Fails on NaN. */
LMM_API int lmm_crowd_set_priorities(lmm_crowd* crowd, const float* priorities, size_t count);
/* Where to draw character i between its updates: a rigid world transform (4x4 column-major, as
 * lmm_character_world_matrices) to apply on the left of its world matrices; it carries the last
 * pose on at the root's velocity and yaw rate for the time since the last update (identity right
 * after an update). */
LMM_API int lmm_crowd_shown_transform(const lmm_crowd* crowd, size_t i, float matrix[16]);

#ifdef __cplusplus
}
#endif

#endif /* LMM_LMM_H */
