// The emulated npu: a CPU-backed "npu" device, PyTorch's PrivateUse1 backend with CPU memory
// and CPU kernels. Transfer-style ports (which move everything to "npu") can then run on a
// machine without Ascend hardware and be compared bit for bit with the original on CPU.
//
// What it provides: an allocator (host memory tagged with the npu device, with counters), a
// device guard (per-thread current device, configurable device count, no-op streams/events),
// the PrivateUse1 hooks (generators, pinned memory, torch.accelerator), the handful of kernels a
// device must own (allocation, views, copies, scalar reads), routes for every other op to
// the CPU kernels through at::native::cpu_fallback, and recurrent layers run by CPU's own code.
#include <ATen/ATen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/library.h>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/EmptyTensor.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/resize_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/core/impl/alloc_cpu.h>
#include <c10/util/SmallVector.h>

#include <atomic>
#include <map>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <string>
#include <vector>

namespace emulated_npu {

constexpr c10::DeviceType kNpu = c10::DeviceType::PrivateUse1;

c10::DeviceIndex g_device_count = 1;
// The zero-copy route to the CPU kernels (run_zero_copy); off, every op copies its operands as
// at::native::cpu_fallback does (kept switchable to measure one against the other).
bool g_zero_copy = true;
// Which ops took the copying route, by name, when asked (to find what a step still copies).
std::atomic<bool> g_count_copying{false};
std::mutex g_copying_mutex;
std::map<std::string, int64_t> g_copying;

// Which operators reach the device's CPU route (what torch_npu would run on the NPU or, lacking a
// kernel, fall back to the CPU for), named as torch_npu's fallback warning names them
// (`aten::isin.Tensor_Tensor_out`), with the dtypes of their tensor inputs. Off by default: one
// relaxed load per routed op when off.
// Keyed by the schema's address and the input dtypes as one byte each (no string is built per
// call); names are made when the counts are handed over.
std::atomic<bool> g_record_ops{false};
std::mutex g_record_mutex;
struct Recorded {
  std::string name;
  std::unordered_map<std::string, int64_t> by_dtypes;  // one byte per input tensor: its ScalarType
};
std::unordered_map<const void*, Recorded> g_recorded;
// Where each recorded operator was first dispatched from: the Python frames of the dispatching
// thread, innermost first ("file\tline\tfunction" lines; none on autograd's backward threads).
// Taken once per operator while on, so it costs a few stack walks per run.
std::atomic<bool> g_record_sites{false};
std::map<std::string, std::string> g_sites;

// torch_npu's fallback warning, printed once per operator a release has no NPU kernel for. Set
// from Python with the release's supported operators; nothing printed unless set.
std::atomic<bool> g_warn_fallback{false};
std::set<std::string> g_supported;
std::map<std::string, std::string> g_warn_name;  // an op torch_npu's warning names otherwise
std::unordered_set<const void*> g_seen;           // operators looked at already (by schema address)
std::set<std::string> g_warned;
thread_local c10::DeviceIndex t_current_device = 0;

// ---------------------------------------------------------------------------------- memory
std::atomic<int64_t> g_allocated{0};
std::atomic<int64_t> g_peak{0};
std::atomic<int64_t> g_alloc_calls{0};

struct Block {
  void* ptr;
  size_t size;
};

void free_block(void* ctx) {
  auto* block = static_cast<Block*>(ctx);
  g_allocated -= static_cast<int64_t>(block->size);
  c10::free_cpu(block->ptr);
  delete block;
}

struct HostBackedAllocator final : c10::Allocator {
  c10::DataPtr allocate(size_t nbytes) override {
    void* ptr = nbytes ? c10::alloc_cpu(nbytes) : nullptr;
    int64_t now = (g_allocated += static_cast<int64_t>(nbytes));
    int64_t peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
    ++g_alloc_calls;
    auto* block = new Block{ptr, nbytes};
    return {ptr, block, &free_block, c10::Device(kNpu, t_current_device)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
};

HostBackedAllocator g_allocator;

// ---------------------------------------------------------------------------------- device guard
struct NpuGuard final : c10::impl::DeviceGuardImplInterface {
  c10::DeviceType type() const override { return kNpu; }
  c10::Device exchangeDevice(c10::Device d) const override {
    auto old = getDevice();
    if (d.index() >= 0) t_current_device = d.index();
    return old;
  }
  c10::Device getDevice() const override { return c10::Device(kNpu, t_current_device); }
  void setDevice(c10::Device d) const override {
    TORCH_CHECK(d.index() < g_device_count, "Invalid device id: ", static_cast<int>(d.index()));
    if (d.index() >= 0) t_current_device = d.index();
  }
  void uncheckedSetDevice(c10::Device d) const noexcept override {
    if (d.index() >= 0) t_current_device = d.index();
  }
  c10::Stream getStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getDefaultStream(c10::Device d) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getNewStream(c10::Device d, int) const override { return c10::Stream(c10::Stream::DEFAULT, d); }
  c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override {
    return c10::Stream(c10::Stream::DEFAULT, d);
  }
  c10::Stream exchangeStream(c10::Stream s) const override { return c10::Stream(c10::Stream::DEFAULT, s.device()); }
  c10::DeviceIndex deviceCount() const noexcept override { return g_device_count; }
  // Streams and events do nothing: every kernel has finished when it returns.
  void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
  void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {
    static int marker = 0;
    *event = &marker;
  }
  void block(void*, const c10::Stream&) const override {}
  bool queryEvent(void*) const override { return true; }
  bool queryStream(const c10::Stream&) const override { return true; }
  void synchronizeStream(const c10::Stream&) const override {}
  void synchronizeEvent(void*) const override {}
  void synchronizeDevice(const c10::DeviceIndex) const override {}
  double elapsedTime(void*, void*, const c10::DeviceIndex) const override { return 0.0; }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, NpuGuard);

// ---------------------------------------------------------------------------------- hooks
struct NpuHooks final : at::PrivateUse1HooksInterface {
  bool isBuilt() const override { return true; }
  bool isAvailable() const override { return g_device_count > 0; }
  const at::Generator& getDefaultGenerator(c10::DeviceIndex index) const override {
    // Kernels run on CPU and draw from the CPU generator; these exist so that torch.npu's
    // generator queries answer. Seeding them does not touch the CPU stream.
    static std::vector<at::Generator> generators = [] {
      std::vector<at::Generator> out;
      for (int i = 0; i < 64; ++i) out.push_back(at::make_generator<at::CPUGeneratorImpl>(0));
      return out;
    }();
    auto i = index < 0 ? t_current_device : index;
    return generators.at(i);
  }
  at::Generator getNewGenerator(c10::DeviceIndex) const override {
    return at::make_generator<at::CPUGeneratorImpl>(0);
  }
  at::Device getDeviceFromPtr(void*) const override { return c10::Device(kNpu, t_current_device); }
  bool isPinnedPtr(const void*) const override { return false; }
  c10::Allocator* getPinnedMemoryAllocator() const override { return c10::GetCPUAllocator(); }
  bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
  c10::DeviceIndex deviceCount() const override { return g_device_count; }
  void setCurrentDevice(c10::DeviceIndex d) const override { t_current_device = d; }
  c10::DeviceIndex getCurrentDevice() const override { return t_current_device; }
  c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
    auto old = t_current_device;
    t_current_device = d;
    return old;
  }
  c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
  void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
    auto* impl = storage.unsafeGetStorageImpl();
    auto fresh = g_allocator.allocate(newsize);
    size_t keep = std::min(newsize, impl->nbytes());
    if (keep) std::memcpy(fresh.get(), impl->data(), keep);
    impl->set_data_ptr_noswap(std::move(fresh));
    impl->set_nbytes(newsize);
  }
};

bool g_hooks_registered = [] {
  at::RegisterPrivateUse1HooksInterface(new NpuHooks());
  return true;
}();

// ---------------------------------------------------------------------------------- kernels
// A CPU tensor over the same memory (no copy), keeping the conjugate and negative bits so that
// CPU's copy_ resolves them itself.
at::Tensor host_alias(const at::Tensor& t) {
  auto opts = t.options().device(c10::kCPU);
  at::Tensor out = at::from_blob(t.data_ptr(), t.sizes(), t.strides(), opts);
  if (t.is_conj()) out = out._conj();
  if (t.is_neg()) out = out._neg_view();
  return out;
}

at::Tensor empty_memory_format(c10::IntArrayRef size, std::optional<at::ScalarType> dtype,
                               std::optional<at::Layout>, std::optional<at::Device> device,
                               std::optional<bool>, std::optional<at::MemoryFormat> memory_format) {
  c10::OptionalDeviceGuard guard(device);
  return at::detail::empty_generic(size, &g_allocator, c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                   c10::dtype_or_default(dtype), memory_format);
}

at::Tensor empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<at::ScalarType> dtype,
                         std::optional<at::Layout>, std::optional<at::Device> device, std::optional<bool>) {
  c10::OptionalDeviceGuard guard(device);
  return at::detail::empty_strided_generic(size, stride, &g_allocator,
                                           c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                           c10::dtype_or_default(dtype));
}

at::Tensor copy_from(const at::Tensor& self, const at::Tensor& dst, bool) {
  TORCH_CHECK(self.sizes() == dst.sizes(), "copy between npu and another device needs equal sizes");
  if (self.numel() == 0) return dst;
  at::Tensor src_host = self.is_cpu() ? self : host_alias(self);
  at::Tensor dst_host = dst.is_cpu() ? dst : host_alias(dst);
  dst_host.copy_(src_host);
  return dst;
}

at::Tensor copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
  dst.resize_(self.sizes());
  return copy_from(self, dst, false);
}

c10::Scalar local_scalar_dense(const at::Tensor& self) { return at::_local_scalar_dense(host_alias(self)); }

const at::Tensor& resize(const at::Tensor& self, c10::IntArrayRef size, std::optional<at::MemoryFormat> fmt) {
  return at::native::resize_(self, size, fmt);
}

at::Tensor& set_storage(at::Tensor& self, c10::Storage source, int64_t offset, c10::IntArrayRef size,
                        c10::IntArrayRef stride) {
  return at::native::set_storage_cpu_(self, source, offset, size, stride);
}

at::Tensor& set_source_storage(at::Tensor& self, c10::Storage source) {
  int64_t numel = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return at::native::set_storage_cpu_(self, source, 0, {numel}, {});
}

at::Tensor& set_source_tensor(at::Tensor& self, const at::Tensor& src) {
  return at::native::set_storage_cpu_(self, src.storage(), src.storage_offset(), src.sizes(), src.strides());
}

at::Tensor& set_empty(at::Tensor& self) {
  c10::Storage storage(c10::Storage::use_byte_size_t(), 0, &g_allocator, true);
  return at::native::set_storage_cpu_(self, storage, 0, {0}, {});
}

// Mixed devices raise as they do on a real accelerator: an npu tensor may meet a CPU tensor
// only if that one is a 0-dim scalar (or an index, as CUDA allows), and two npu indices never.
std::optional<c10::Device> check_devices(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  static const std::set<std::string> cpu_ok = {"aten::index", "aten::index_put", "aten::index_put_",
                                               "aten::_index_put_impl_"};
  const auto n = op.schema().arguments().size();
  std::optional<c10::Device> npu;
  std::optional<c10::Device> host;
  auto see = [&](const at::Tensor& t) {
    if (!t.defined()) return;
    if (t.device().type() == kNpu) {
      TORCH_CHECK(!npu || *npu == t.device(), "Expected all tensors to be on the same device, but found at least two devices, ",
                  *npu, " and ", t.device(), "!");
      npu = t.device();
    } else if (t.is_cpu() && t.dim() > 0) {
      host = t.device();
    }
  };
  for (auto it = stack->end() - n; it != stack->end(); ++it) {
    if (it->isTensor()) see(it->toTensor());
    else if (it->isTensorList()) for (const at::Tensor& t : it->toTensorList()) see(t);
    else if (it->isOptionalTensorList()) {
      for (const std::optional<at::Tensor>& t : it->toOptionalTensorList()) if (t) see(*t);
    }
  }
  if (npu && host && !cpu_ok.count(op.schema().name())) {
    TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, ", *npu,
                " and cpu!");
  }
  return npu;
}

// The first tensor argument is a CPU scalar (`1.0 - t` is rsub(t, 1.0), which calls
// sub(wrapped 1.0, t)): cpu_fallback places its results on the first tensor's device, where a
// real device places them on the device operand's.
bool first_tensor_is_cpu(const c10::OperatorHandle& op, const torch::jit::Stack* stack) {
  const auto n = op.schema().arguments().size();
  for (auto it = stack->end() - n; it != stack->end(); ++it) {
    if (it->isTensor()) return it->toTensor().defined() && it->toTensor().is_cpu();
  }
  return false;
}

// ------------------------------------------------------------- zero-copy route to the CPU kernels
// The npu's memory is host memory, so a CPU kernel can read and write it in place: the operands
// are handed over as CPU tensors over the same bytes (same storage offset, sizes and strides),
// and what the kernel allocates becomes npu memory as it is. at::native::cpu_fallback instead
// copies every operand to fresh CPU memory and every result back, which doubles a step's cost.
// A written operand the kernel resized (an out= tensor of the wrong size) is copied back. Calls
// that would need more go the copying way: written tensor lists, a device argument (factories),
// conjugate/negative bits, layouts other than strided, and resize ops themselves.

// Holds a storage for as long as a storage over the same bytes made from it lives.
struct StorageRef {
  c10::Storage storage;
  int64_t counted;  // bytes added to the npu counters when the bytes became npu memory
};

void drop_storage_ref(void* ctx) {
  auto* ref = static_cast<StorageRef*>(ctx);
  g_allocated -= ref->counted;
  delete ref;
}

// A storage over the bytes of `source`, tagged with `device`, keeping `source` alive.
c10::Storage storage_over(const c10::Storage& source, c10::Device device, c10::Allocator* allocator,
                          bool resizable, int64_t counted) {
  c10::DataPtr ptr(source.mutable_data(), new StorageRef{source, counted}, &drop_storage_ref, device);
  return c10::Storage(c10::Storage::use_byte_size_t(), source.nbytes(), std::move(ptr), allocator, resizable);
}

at::Tensor tensor_over(c10::Storage storage, c10::DispatchKey key, const at::Tensor& like) {
  at::Tensor out = at::detail::make_tensor<c10::TensorImpl>(std::move(storage), c10::DispatchKeySet(key), like.dtype());
  out.unsafeGetTensorImpl()->set_sizes_and_strides(like.sizes(), like.strides(), like.storage_offset());
  return out;
}

bool plain_strided(const at::Tensor& t) {
  return t.layout() == c10::kStrided && !t.is_conj() && !t.is_neg() && !t.is_quantized();
}

// Can this call take the zero-copy route? (Checked before anything on the stack changes.)
bool zero_copy_ok(const c10::OperatorHandle& op, const torch::jit::Stack* stack) {
  const auto& args = op.schema().arguments();
  const auto n = args.size();
  auto first = stack->end() - static_cast<std::ptrdiff_t>(n);
  for (size_t i = 0; i < n; ++i) {
    const auto* alias = args[i].alias_info();
    const c10::IValue& v = *(first + i);
    if (alias && alias->isWrite() && !v.isTensor() && !v.isNone()) return false;  // written lists
    if (v.isDevice()) return false;
    if (v.isTensor()) {
      if (v.toTensor().defined() && !plain_strided(v.toTensor())) return false;
    } else if (v.isTensorList()) {
      for (const at::Tensor& t : v.toTensorList()) if (t.defined() && !plain_strided(t)) return false;
    } else if (v.isOptionalTensorList()) {
      for (const std::optional<at::Tensor>& t : v.toOptionalTensorList()) if (t && t->defined() && !plain_strided(*t)) return false;
    }
  }
  return op.schema().name().find("resize") == std::string::npos;
}

// One call's storages. Few operands per op, so small vectors searched linearly: an op costs a
// few microseconds more than on the CPU, and hash maps were a visible part of that.
struct ZeroCopyCall {
  c10::Device npu;
  c10::SmallVector<std::pair<const c10::StorageImpl*, c10::Storage>, 6> host_of;  // npu -> CPU alias
  c10::SmallVector<std::pair<const c10::StorageImpl*, c10::Storage>, 6> npu_of;   // CPU -> npu
  c10::SmallVector<const c10::StorageImpl*, 2> cpu_operands;                      // CPU operands' storages

  static const c10::Storage* find(const c10::SmallVectorImpl<std::pair<const c10::StorageImpl*, c10::Storage>>& in,
                                  const c10::StorageImpl* key) {
    for (const auto& [k, v] : in) if (k == key) return &v;
    return nullptr;
  }

  // One CPU storage per npu storage, so that operands sharing memory share it for the kernel's
  // overlap checks too. Resizable: a kernel may resize an out= tensor, and the new memory is then
  // copied back to the npu tensor (see run_zero_copy).
  at::Tensor to_host(const at::Tensor& t) {
    if (!t.defined()) return t;
    const c10::StorageImpl* key = t.storage().unsafeGetStorageImpl();
    if (t.device().type() != kNpu) {
      cpu_operands.push_back(key);
      return t;
    }
    const c10::Storage* host = find(host_of, key);
    if (!host) {
      c10::Storage made = storage_over(t.storage(), c10::Device(c10::kCPU), c10::GetCPUAllocator(), true, 0);
      npu_of.emplace_back(made.unsafeGetStorageImpl(), t.storage());
      host_of.emplace_back(key, std::move(made));
      host = &host_of.back().second;
    }
    return tensor_over(*host, c10::DispatchKey::CPU, t);
  }

  at::Tensor to_npu(const at::Tensor& t) {
    if (!t.defined() || t.device().type() != c10::kCPU) return t;
    if (!plain_strided(t)) return t.to(npu);  // a sparse result: moved (and refused) as a copy would be
    const c10::StorageImpl* key = t.storage().unsafeGetStorageImpl();
    for (const auto* k : cpu_operands) if (k == key) return t.to(npu);  // a CPU operand handed back: copied
    const c10::Storage* mem = find(npu_of, key);
    if (!mem) {  // memory the kernel allocated: it becomes npu memory, uncopied
      const auto bytes = static_cast<int64_t>(t.storage().nbytes());
      int64_t now = (g_allocated += bytes);
      int64_t peak = g_peak.load();
      while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
      }
      ++g_alloc_calls;
      npu_of.emplace_back(key, storage_over(t.storage(), npu, &g_allocator, true, bytes));
      mem = &npu_of.back().second;
    }
    return tensor_over(*mem, c10::DispatchKey::PrivateUse1, t);
  }
};

void run_zero_copy(const c10::OperatorHandle& op, torch::jit::Stack* stack, c10::Device npu) {
  const auto& schema = op.schema();
  const auto n = schema.arguments().size();
  auto first = stack->end() - static_cast<std::ptrdiff_t>(n);
  ZeroCopyCall call{npu, {}, {}, {}};
  c10::SmallVector<std::pair<size_t, at::Tensor>, 2> written;  // (argument, its npu tensor)
  c10::SmallVector<at::Tensor, 2> written_hosts;
  for (size_t i = 0; i < n; ++i) {
    c10::IValue& v = *(first + i);
    if (v.isTensor()) {
      const auto* arg_alias = schema.arguments()[i].alias_info();
      if (arg_alias && arg_alias->isWrite() && v.toTensor().device().type() == kNpu) {
        written.emplace_back(i, v.toTensor());
        v = call.to_host(v.toTensor());
        written_hosts.push_back(v.toTensor());
      } else {
        v = call.to_host(v.toTensor());
      }
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> hosts;
      hosts.reserve(v.toTensorList().size());
      for (const at::Tensor& t : v.toTensorList()) hosts.push_back(call.to_host(t));
      v = std::move(hosts);
    } else if (v.isOptionalTensorList()) {
      c10::List<std::optional<at::Tensor>> hosts;
      for (const std::optional<at::Tensor>& t : v.toOptionalTensorList()) {
        hosts.push_back(t ? std::optional<at::Tensor>(call.to_host(*t)) : std::nullopt);
      }
      v = std::move(hosts);
    }
  }
  op.redispatchBoxed(c10::DispatchKeySet(c10::DispatchKey::CPU), stack);
  for (size_t w = 0; w < written.size(); ++w) {  // a kernel that resized its output: bring it back
    const at::Tensor& host = written_hosts[w];
    const at::Tensor& dst = written[w].second;
    if (host.storage().data() != dst.storage().data() || host.sizes() != dst.sizes() ||
        host.strides() != dst.strides() || host.storage_offset() != dst.storage_offset()) {
      copy_from_and_resize(host, dst);
    }
  }
  const auto& returns = schema.returns();
  auto out = stack->end() - static_cast<std::ptrdiff_t>(returns.size());
  for (size_t r = 0; r < returns.size(); ++r) {
    c10::IValue& v = *(out + r);
    const auto* alias = returns[r].alias_info();
    if (alias && alias->isWrite()) {  // an in-place op returns its operand: the npu tensor itself
      bool found = false;
      for (const auto& [i, original] : written) {
        const auto* arg_alias = schema.arguments()[i].alias_info();
        if (arg_alias->beforeSets() == alias->beforeSets()) {
          v = original;
          found = true;
          break;
        }
      }
      if (found) continue;
    }
    if (v.isTensor()) {
      v = call.to_npu(v.toTensor());
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> npus;
      for (const at::Tensor& t : v.toTensorList()) npus.push_back(call.to_npu(t));
      v = std::move(npus);
    }
  }
}

std::string op_label(const c10::OperatorHandle& op) {
  const auto& schema = op.schema();
  return schema.name() + (schema.overload_name().empty() ? "" : "." + schema.overload_name());
}

// The Python frames of this thread, innermost first, one "file\tline\tfunction" line each (up to
// 40); empty when the thread runs no Python code (autograd's device threads) or Python is ending.
std::string python_frames() {
  if (!Py_IsInitialized()) return "";
#if PY_VERSION_HEX >= 0x030D0000
  if (Py_IsFinalizing()) return "";
#else
  if (_Py_IsFinalizing()) return "";
#endif
  PyGILState_STATE gil = PyGILState_Ensure();
  std::string out;
  PyFrameObject* frame = PyEval_GetFrame();  // borrowed
  Py_XINCREF(frame);
  for (int depth = 0; frame != nullptr && depth < 40; ++depth) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    PyObject* file = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_filename");
    PyObject* func = PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), "co_name");
    const char* file_text = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : nullptr;
    const char* func_text = func && PyUnicode_Check(func) ? PyUnicode_AsUTF8(func) : nullptr;
    out += file_text ? file_text : "?";
    out += "\t" + std::to_string(PyFrame_GetLineNumber(frame)) + "\t";
    out += func_text ? func_text : "?";
    out += "\n";
    Py_XDECREF(file);
    Py_XDECREF(func);
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  PyErr_Clear();
  PyGILState_Release(gil);
  return out;
}

void note_op(const c10::OperatorHandle& op, const torch::jit::Stack* stack) {
  if (g_warn_fallback.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(g_record_mutex);
    if (g_seen.insert(&op.schema()).second) {
      const std::string name = op_label(op);
      const auto renamed = g_warn_name.find(name);
      const std::string shown = renamed == g_warn_name.end() ? name : renamed->second;
      if (!g_supported.count(name) && g_warned.insert(shown).second) {
        std::fprintf(stderr, "[W npu_cpu_fallback] Warning: CAUTION: The operator '%s' is not currently supported "
                     "on the NPU backend and will fall back to run on the CPU. This may have performance "
                     "implications. (function npu_cpu_fallback)\n", shown.c_str());
        std::fflush(stderr);
      }
    }
  }
  if (g_record_ops.load(std::memory_order_relaxed)) {
    const auto n = op.schema().arguments().size();
    std::string dtypes;  // short: in the string's own buffer up to 15 inputs
    auto add = [&](const at::Tensor& t) {  // a Python number wrapped as a tensor is no device data
      if (!t.defined() || t.unsafeGetTensorImpl()->is_wrapped_number()) return;
      dtypes.push_back(static_cast<char>(static_cast<unsigned char>(t.scalar_type())));
    };
    for (auto it = stack->end() - static_cast<std::ptrdiff_t>(n); it != stack->end(); ++it) {
      if (it->isTensor()) add(it->toTensor());
      else if (it->isTensorList()) for (const at::Tensor& t : it->toTensorList()) add(t);
    }
    bool first = false;
    {
      std::lock_guard<std::mutex> lock(g_record_mutex);
      Recorded& rec = g_recorded[&op.schema()];
      if (rec.name.empty()) {
        rec.name = op_label(op);
        first = true;
      }
      ++rec.by_dtypes[dtypes];
    }
    if (first && g_record_sites.load(std::memory_order_relaxed)) {
      std::string where = python_frames();  // outside the lock: it takes the GIL
      std::lock_guard<std::mutex> lock(g_record_mutex);
      g_sites.emplace(op_label(op), std::move(where));
    }
  }
}

void run_on_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  if (g_record_ops.load(std::memory_order_relaxed) || g_warn_fallback.load(std::memory_order_relaxed)) {
    note_op(op, stack);
  }
  const auto npu = check_devices(op, stack);
  if (npu && g_zero_copy && zero_copy_ok(op, stack)) {
    run_zero_copy(op, stack, *npu);
    return;
  }
  if (g_count_copying) {
    std::lock_guard<std::mutex> lock(g_copying_mutex);
    ++g_copying[op.schema().name() + (op.schema().overload_name().empty() ? "" : "." + op.schema().overload_name())];
  }
  const bool moved_to_cpu = npu && first_tensor_is_cpu(op, stack);
  at::native::cpu_fallback(op, stack);
  if (!moved_to_cpu) return;
  const auto returns = op.schema().returns().size();
  for (auto it = stack->end() - returns; it != stack->end(); ++it) {
    if (it->isTensor() && it->toTensor().defined() && it->toTensor().is_cpu()) {
      *it = c10::IValue(it->toTensor().to(*npu));
    }
  }
}

// The unfused dropout that CPU runs (PrivateUse1 otherwise takes the fused native_dropout, which
// draws its mask differently). Registered at AutogradPrivateUse1 so autograd sees the pieces.
at::Tensor dropout_like_cpu(const at::Tensor& input, double p, bool train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (p == 0 || !train || input.numel() == 0) return input;
  if (p == 1) return input.mul(at::zeros({}, input.options()));
  at::Tensor noise = at::empty_like(input).bernoulli_(1 - p);
  noise.div_(1 - p);
  return input.mul(noise);
}

at::Tensor& dropout_like_cpu_(at::Tensor& input, double p, bool train) {
  TORCH_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
  if (p == 0 || !train || input.numel() == 0) return input;
  if (p == 1) return input.mul_(at::zeros({}, input.options()));
  at::Tensor noise = at::empty_like(input).bernoulli_(1 - p);
  noise.div_(1 - p);
  return input.mul_(noise);
}

// nn.Module.to() keeps a Parameter object (and so weights shared between modules, such as a
// tied embedding and output layer) only when the old and new tensors can share one TensorImpl
// type; torch_npu answers yes for cpu and npu, and so does the emulated npu.
bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
  auto plain = [](const at::Tensor& t) {
    return t.device().type() == c10::DeviceType::CPU || t.device().type() == c10::DeviceType::PrivateUse1;
  };
  return plain(self) && plain(from) && !self.is_sparse() && !from.is_sparse();
}

// Recurrent layers (nn.LSTM/GRU/RNN and their cells) run CPU's own implementation on host copies.
// Their aten ops are composite, and the composite code picks its path by device: on a
// PrivateUse1 tensor an LSTM or GRU cell calls the fused-cell kernels that only CUDA and XPU
// have, and every layer skips CPU's one-matmul-for-all-steps input projection and CPU's oneDNN
// RNN. Copying the operands to CPU with differentiable copies (`Tensor::to`, whose backward copies
// the gradient back) and calling the op there gives exactly CPU's forward, backward and dropout
// draws; the results are copied back to the device the operands came from.
void rnn_through_cpu(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  // recorded and warned about as the layer torch_npu sees (its backward runs on the host copies)
  if (g_record_ops.load(std::memory_order_relaxed) || g_warn_fallback.load(std::memory_order_relaxed)) {
    note_op(op, stack);
  }
  const auto& args = op.schema().arguments();
  const auto n = args.size();
  auto first = stack->end() - static_cast<std::ptrdiff_t>(n);
  std::optional<c10::Device> npu;
  bool host = false;
  auto see = [&](const at::Tensor& t) {
    if (!t.defined()) return;
    if (t.device().type() == kNpu) {
      TORCH_CHECK(!npu || *npu == t.device(), "Expected all tensors to be on the same device, but found at least two devices, ",
                  *npu, " and ", t.device(), "!");
      npu = t.device();
    } else {
      host = true;
    }
  };
  // Packed sequences keep their batch sizes on the host on every device; that one may be CPU.
  for (size_t i = 0; i < n; ++i) {
    const c10::IValue& v = *(first + i);
    if (args[i].name() == "batch_sizes") continue;
    if (v.isTensor()) see(v.toTensor());
    else if (v.isTensorList()) for (const at::Tensor& t : v.toTensorList()) see(t);
  }
  TORCH_CHECK(npu.has_value(), op.schema().name(), ": no npu operand");
  TORCH_CHECK(!host, "Expected all tensors to be on the same device, but found at least two devices, ", *npu,
              " and cpu!");
  auto to_host = [](const at::Tensor& t) { return t.defined() ? t.to(t.options().device(c10::kCPU)) : t; };
  for (size_t i = 0; i < n; ++i) {
    c10::IValue& v = *(first + i);
    if (v.isTensor()) {
      v = to_host(v.toTensor());
    } else if (v.isTensorList()) {
      c10::List<at::Tensor> copies;
      for (const at::Tensor& t : v.toTensorList()) copies.push_back(to_host(t));
      v = std::move(copies);
    }
  }
  op.callBoxed(stack);
  const auto r = op.schema().returns().size();
  for (auto it = stack->end() - static_cast<std::ptrdiff_t>(r); it != stack->end(); ++it) {
    if (it->isTensor()) {
      const at::Tensor t = it->toTensor();
      *it = t.to(t.options().device(*npu));
    }
  }
}

// Registered at both keys: AutogradPrivateUse1 so that the host copies are recorded by autograd,
// PrivateUse1 for inference mode (where the autograd key is skipped).
void register_rnn_routes(torch::Library& m) {
  static const char* overloads[] = {"lstm.input", "lstm.data", "gru.input", "gru.data", "rnn_tanh.input",
                                    "rnn_tanh.data", "rnn_relu.input", "rnn_relu.data", "lstm_cell",
                                    "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"};
  for (const char* name : overloads) m.impl(name, torch::CppFunction::makeFromBoxedFunction<&rnn_through_cpu>());
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("_has_compatible_shallow_copy_type", has_compatible_shallow_copy_type);
  m.impl("empty.memory_format", empty_memory_format);
  m.impl("empty_strided", empty_strided);
  m.impl("as_strided", at::native::as_strided_tensorimpl);
  m.impl("view", at::native::view);
  m.impl("_reshape_alias", at::native::_reshape_alias);
  // The two view ops with device kernels of their own: run on a CPU copy they would return a
  // new tensor, and a write through torch.view_as_real(x) (as complex optimizer steps make)
  // would never reach x.
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("resize_", resize);
  m.impl("_copy_from", copy_from);
  m.impl("_copy_from_and_resize", copy_from_and_resize);
  m.impl("_local_scalar_dense", local_scalar_dense);
  m.impl("set_.source_Storage_storage_offset", set_storage);
  m.impl("set_.source_Storage", set_source_storage);
  m.impl("set_.source_Tensor", set_source_tensor);
  m.impl("set_", set_empty);
  // Composite kernels that would otherwise be used for a custom device.
  m.impl("convolution", torch::CppFunction::makeFromBoxedFunction<&run_on_cpu>());
  m.impl("convolution_backward", torch::CppFunction::makeFromBoxedFunction<&run_on_cpu>());
  register_rnn_routes(m);
}

// A conjugate or negative view copied to or from the npu: the copy kernel above hands the bits to
// CPU's copy_, which resolves them. Left to the Conjugate/Negative fallbacks instead, _copy_from
// would clone its input first, the clone of an npu tensor is again an npu-to-npu _copy_from, and
// the recursion ends in a stack overflow (x.conj().cpu(), x * y.conj(), complex backward). Only
// external devices reach _copy_from (CPU and CUDA copy among themselves), so this changes nothing else.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
  m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
  m.impl("dropout", dropout_like_cpu);
  m.impl("dropout_", dropout_like_cpu_);
  register_rnn_routes(m);
}

// Autocast on npu: the op lists PyTorch shares between accelerators (CUDA's), which torch_npu's
// lists follow closely; the casts themselves then run on the CPU kernels.
TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

using at::IntArrayRef;
using at::Scalar;
using at::ScalarType;
using at::Tensor;

// Registered on request (torch_npu/__init__ does, unless NPU_STANDIN_AUTOCAST=0): without these
// kernels an autocast region on npu runs every op at its input precision.
// Registrations made at run time live until the process ends and are never destroyed: a
// Library's destructor removes its kernels, and at exit that would race with threads still
// dispatching (a DataLoader's pin-memory thread), ending in std::terminate.
torch::Library* g_autocast = nullptr;

bool register_autocast() {
  if (g_autocast) return false;
  g_autocast = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::AutocastPrivateUse1,
                                                __FILE__, __LINE__);
  torch::Library& m = *g_autocast;
#define NPU_LOWER(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
#define NPU_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
#define NPU_FP32_OPT(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
#define NPU_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
  AT_FORALL_LOWER_PRECISION_FP(NPU_LOWER)
  AT_FORALL_FP32(NPU_FP32)
  AT_FORALL_FP32_SET_OPT_DTYPE(NPU_FP32_OPT)
  AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
  AT_FORALL_PROMOTE(NPU_PROMOTE)
#undef NPU_LOWER
#undef NPU_FP32
#undef NPU_FP32_OPT
#undef NPU_PROMOTE
  return true;
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&run_on_cpu>());
}

// Every aten op with a CPU kernel gets the CPU kernel on npu too, so composite decompositions
// (native_layer_norm's math version, for one) never replace what CPU would run.
torch::Library* g_routes = nullptr;  // never destroyed, see g_autocast

int64_t route_cpu_kernels() {
  if (g_routes) return 0;
  static const std::set<std::string> own = {
      "empty", "empty_strided", "as_strided", "view", "view_as_real", "view_as_complex", "_reshape_alias",
      "resize_", "_copy_from", "_copy_from_and_resize", "_local_scalar_dense", "set_", "copy_", "_to_copy", "to",
      "_to_cpu",
      "convolution", "convolution_backward", "alias", "detach", "_unsafe_view", "unfold",
      "_pin_memory", "is_pinned", "pin_memory", "record_stream", "_has_compatible_shallow_copy_type",
      "empty_like", "resize_as_", "lift_fresh", "lift", "lift_fresh_copy"};
  g_routes = new torch::Library(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1,
                                              __FILE__, __LINE__);
  auto& dispatcher = c10::Dispatcher::singleton();
  int64_t n = 0;
  for (const auto& name : dispatcher.getAllOpNames()) {
    if (name.name.rfind("aten::", 0) != 0) continue;
    std::string base = name.name.substr(6);
    if (own.count(base)) continue;
    auto handle = dispatcher.findOp(name);
    if (!handle) continue;
    if (!handle->hasKernelForDispatchKey(c10::DispatchKey::CPU)) continue;
    if (handle->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1)) continue;
    if (handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)) continue;
    std::string full = name.overload_name.empty() ? base : base + "." + name.overload_name;
    g_routes->impl(full.c_str(), torch::CppFunction::makeFromBoxedFunction<&run_on_cpu>());
    ++n;
  }
  return n;
}

void set_device_count(int64_t n) {
  TORCH_CHECK(n >= 0 && n <= 64, "device count must be in [0, 64]");
  g_device_count = static_cast<c10::DeviceIndex>(n);
}

std::vector<int64_t> memory_counters() { return {g_allocated.load(), g_peak.load(), g_alloc_calls.load()}; }

void reset_peak() { g_peak = g_allocated.load(); }

}  // namespace emulated_npu

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.def("route_cpu_kernels", &emulated_npu::route_cpu_kernels, "route every op with a CPU kernel to it");
  m.def("set_device_count", &emulated_npu::set_device_count);
  m.def("register_autocast", &emulated_npu::register_autocast, "cast lists for autocast regions on npu");
  m.def("device_count", [] { return static_cast<int64_t>(emulated_npu::g_device_count); });
  m.def("current_device", [] { return static_cast<int64_t>(emulated_npu::t_current_device); });
  m.def("set_device", [](int64_t d) {
    TORCH_CHECK(d < emulated_npu::g_device_count, "Invalid device id");
    if (d >= 0) emulated_npu::t_current_device = static_cast<c10::DeviceIndex>(d);
  });
  m.def("set_zero_copy", [](bool on) { emulated_npu::g_zero_copy = on; },
        "route ops to the CPU kernels over the npu memory itself (true) or over copies");
  m.def("count_copying_ops", [](bool on) {
    emulated_npu::g_count_copying = on;
    std::lock_guard<std::mutex> lock(emulated_npu::g_copying_mutex);
    auto seen = emulated_npu::g_copying;
    emulated_npu::g_copying.clear();
    return seen;
  }, "start (true) or stop counting the ops that copy their operands; returns the counts so far");
  m.def("memory_counters", &emulated_npu::memory_counters, "(allocated, peak, allocation calls)");
  m.def("reset_peak", &emulated_npu::reset_peak);
  m.def("record_ops", [](bool on) {
    emulated_npu::g_record_ops = on;
    std::map<std::string, std::map<std::string, int64_t>> seen;
    std::unordered_map<const void*, emulated_npu::Recorded> taken;
    {
      std::lock_guard<std::mutex> lock(emulated_npu::g_record_mutex);
      taken.swap(emulated_npu::g_recorded);
    }
    for (const auto& entry : taken) {
      auto& slot = seen[entry.second.name];
      for (const auto& count : entry.second.by_dtypes) {
        std::string names;
        for (const char c : count.first) {
          if (!names.empty()) names += ",";
          names += c10::toString(static_cast<c10::ScalarType>(static_cast<unsigned char>(c)));
        }
        slot[names] += count.second;
      }
    }
    return seen;
  }, "start (true) or stop recording the operators the device routes; returns {op: {input dtypes: count}} so far");
  m.def("record_sites", [](bool on) {
    emulated_npu::g_record_sites = on;
    std::lock_guard<std::mutex> lock(emulated_npu::g_record_mutex);
    auto seen = emulated_npu::g_sites;
    emulated_npu::g_sites.clear();
    return seen;
  }, "while recording, also keep where each operator was first dispatched (the Python frames, innermost "
     "first, 'file<TAB>line<TAB>function' lines); returns {op: frames} so far");
  m.def("warn_fallback", [](std::vector<std::string> supported, std::map<std::string, std::string> names) {
    std::lock_guard<std::mutex> lock(emulated_npu::g_record_mutex);
    emulated_npu::g_supported = std::set<std::string>(supported.begin(), supported.end());
    emulated_npu::g_warn_name = std::move(names);
    emulated_npu::g_seen.clear();
    emulated_npu::g_warned.clear();
    emulated_npu::g_warn_fallback = true;
  }, "print torch_npu's fallback warning once for each routed operator not in `supported` "
     "(under the name `names` gives it, if any)");
}
