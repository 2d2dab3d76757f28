// Internal to the import library: the [tags] and [events] sections of a skeleton config.
#pragma once

#include <string>

#include <toml++/toml.h>

#include "lmm/import/tags.hpp"

namespace lmm::pipeline {

// The [tags] and [events] sections of the skeleton config `root` read from `path`, whose
// [contacts] lists `contact_joints` joints. Throws InputError "PATH:LINE: ..." naming the key or
// tag at fault: an unknown key or tag, a bad type or value, a repeated name, more than
// lmm::kMaxTags tags, foot_plants not one per contact joint, a name in two mirror pairs.
TagConfig read_tag_config(const toml::table& root, const std::string& path, size_t contact_joints);

}  // namespace lmm::pipeline
