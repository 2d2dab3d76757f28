// Span: a caller-owned array (pointer and count) for job inputs and outputs, as C++20's std::span.
#pragma once

#include <cstddef>

namespace lmm {

// A caller-owned array: a pointer and an element count (no ownership).
template <typename T>
struct Span {
  T* data = nullptr;
  size_t size = 0;

  Span() = default;
  // A span over `count` elements at `pointer`.
  Span(T* pointer, size_t count) : data(pointer), size(count) {}
  // A span over a whole container with data() and size() (e.g. std::vector).
  template <typename Container>
  Span(Container& c) : data(c.data()), size(c.size()) {}  // NOLINT: implicit like std::span
  // Element `i` (unchecked).
  T& operator[](size_t i) const { return data[i]; }
};

}  // namespace lmm
