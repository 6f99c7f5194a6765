// "A step allocates nothing once the workspace is warm": counts every operator new on this
// thread while steps of several batch sizes and an evaluate run, and checks that no workspace
// buffer moved or grew. Eigen products would allocate through malloc, not operator new: the
// models route every product through model/gemm.hpp with workspace-owned packing panels, and
// the buffer check below covers those panels.
//
// This file replaces the global operator new/delete for the whole test binary (forwarding to
// malloc/free); counting is off except inside a CountAllocations scope on the current thread.
#include <cstdlib>
#include <new>

#include <catch2/catch.hpp>

#include "model/model_check.hpp"
#include "model/network.hpp"

namespace {

// thread_local: other threads (another test's workers) never disturb the count.
thread_local bool t_counting = false;
thread_local long t_allocations = 0;

void* allocate(std::size_t size, std::size_t align) {
  if (t_counting) ++t_allocations;
  if (size == 0) size = 1;
  void* p = align <= alignof(std::max_align_t)
                ? std::malloc(size)
                : std::aligned_alloc(align, (size + align - 1) / align * align);
  return p;
}

class CountAllocations {
 public:
  CountAllocations() {
    t_allocations = 0;
    t_counting = true;
  }
  ~CountAllocations() { t_counting = false; }
  long count() const { return t_allocations; }
};

}  // namespace

void* operator new(std::size_t n) {
  if (void* p = allocate(n, 0)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) {
  return ::operator new(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n, 0);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n, 0);
}
void* operator new(std::size_t n, std::align_val_t a) {
  if (void* p = allocate(n, static_cast<std::size_t>(a))) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return ::operator new(n, a);
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}

using namespace stalesgd;
using namespace stalesgd::test;

namespace {

// Where every buffer of a workspace lives and how big it is.
std::vector<std::pair<const void*, std::size_t>> layout(const model::NetworkWorkspace& ws) {
  std::vector<std::pair<const void*, std::size_t>> out;
  for (const auto& a : ws.act) out.emplace_back(a.data(), a.capacity());
  for (const auto& g : ws.grad) out.emplace_back(g.data(), g.capacity());
  out.emplace_back(ws.gemm.data(), ws.gemm.capacity_floats());
  out.emplace_back(ws.loss.col_max.data(), ws.loss.col_max.capacity());
  return out;
}

}  // namespace

TEST_CASE("A training step allocates nothing once the workspace is warm", "[model][network]") {
  const std::pair<const char*, ImageShape> models[] = {{"softmax", {1, 28, 28}},
                                                       {"mlp", {1, 28, 28}},
                                                       {"lenet", {1, 28, 28}},
                                                       {"cifar-cnn", {3, 32, 32}}};
  for (const auto& [name, shape] : models) {
    INFO(name);
    auto m = std::move(make_model(spec(name, {}, 1e-4f), shape, 10)).value();
    const auto sparse = random_batch(shape, 32, 10, 0.8, 1);  // first layer's sparse path
    const auto dense = random_batch(shape, 32, 10, 0.0, 2);   // and its GEMM path
    Split split;
    split.shape = shape;
    split.count = 32;
    split.features = dense.features;
    split.labels = dense.labels;
    std::vector<float> w(m->num_params()), g(m->num_params());
    m->init_params(w, 1);
    auto ws = m->make_workspace(32);
    auto& nws = dynamic_cast<model::NetworkWorkspace&>(*ws);
    const auto before = layout(nws);
    Batch part = sparse.batch();
    part.size = 7;
    m->loss_and_gradient(w, sparse.batch(), g, *ws);  // warm-up
    long count = 0;
    {
      CountAllocations counter;
      for (int rep = 0; rep < 2; ++rep) {
        m->loss_and_gradient(w, sparse.batch(), g, *ws);
        m->loss_and_gradient(w, dense.batch(), g, *ws);
        m->loss_and_gradient(w, part, g, *ws);
        m->evaluate(w, split, *ws, 20);
      }
      count = counter.count();
    }
    CHECK(count == 0);
    CHECK(layout(nws) == before);
  }
}

TEST_CASE("The allocation counter sees allocations", "[model][network]") {
  long count = 0;
  {
    CountAllocations counter;
    auto v = std::make_unique<std::vector<int>>(100);
    count = counter.count();
  }
  CHECK(count == 2);
}
