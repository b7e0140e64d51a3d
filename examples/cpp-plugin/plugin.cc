// delego-cppexample: a delego delegate plugin written in C++17, to show that
// a plugin needs no Go. It speaks delego's plugin protocol (docs/protocol.md)
// as hashicorp/go-plugin's non-Go plugins do, with Debian's gRPC, protobuf
// and flatbuffers, and runs ADD and MUL on float32 tensors (with numpy-style
// broadcasting and the fused activations NONE, RELU, RELU_N1_TO_1 and RELU6).
//
// The process:
//   1. checks the magic cookie, picks the highest protocol version that both
//      it and the host speak, and starts a gRPC server with delego's
//      Delegate service, go-plugin's GRPCController and the gRPC health
//      service ("plugin" is SERVING), on a Unix socket in
//      $PLUGIN_UNIX_SOCKET_DIR that lets in only its own user's processes;
//   2. prints the handshake line 1|VERSION|unix|PATH|grpc on stdout, and
//      from then on sends its stdout to stderr: stdout is the host's;
//   3. serves until the host calls Shutdown or goes away.
//
// What it leaves out, as the protocol allows: go-plugin's automatic mTLS
// (it refuses to start when the host asks for it), regions sent as file
// descriptors (Describe says region_fds=false, so the host sends paths) and
// the doorbell (Attach answers doorbell=false, so every Invoke is a gRPC call).

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/server_posix.h>

#include "delego_plugin.grpc.pb.h"
#include "goplugin.grpc.pb.h"
#include "schema_generated.h"

namespace {

namespace pb = delego::plugin::v1;

// The go-plugin handshake: the host sets the cookie in the environment of
// every plugin it starts.
constexpr const char* kCookieKey = "DELEGO_PLUGIN_COOKIE";
constexpr const char* kCookieValue = "delego-delegate-plugin-4b1f2c9e";

// The protocol versions this plugin speaks, highest last. Protocol 2 adds
// to Describe what a delegate honours and takes (and the options to
// Compile); a version 1 host ignores those fields.
const std::vector<int> kProtocols = {1, 2};

constexpr const char* kName = "cppexample";
constexpr const char* kVersion = "0.1.0 (C++ example)";

// The versions of ADD and MUL it declares: every version of each that
// delego's CPU kernels know; on float32 they all compute the same.
constexpr int kAddMaxVersion = 4;
constexpr int kMulMaxVersion = 5;

using Shape = std::vector<int64_t>;

// shapeText writes a shape for messages: [1 224 224 3].
std::string shapeText(const Shape& s) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < s.size(); i++) out << (i ? " " : "") << s[i];
  out << "]";
  return out.str();
}

// elements is the number of elements of shape s, or -1 when a dimension is
// negative or the count overflows.
int64_t elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0 || (d > 0 && n > INT64_MAX / 4 / d)) return -1;
    n *= d;
  }
  return n;
}

// broadcast is the shape of a binary op's result on operands of shapes a and
// b (numpy's rule: aligned from the last dimension, each pair equal or one
// of them 1); false when they do not broadcast.
bool broadcast(const Shape& a, const Shape& b, Shape* out) {
  size_t rank = std::max(a.size(), b.size());
  out->assign(rank, 1);
  for (size_t i = 0; i < rank; i++) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

// Op is one ADD or MUL of the partition: tensor indices and its clamp.
struct Op {
  bool mul = false;
  int a = 0, b = 0, out = 0;
  bool clamp = false;  // false: fused activation NONE
  float lo = 0, hi = 0;
};

// Partition is a compiled partition: its ops in order, the shapes the model
// gave its tensors, its constants, and its inputs and outputs.
struct Partition {
  std::vector<Op> ops;
  std::vector<Shape> shapes;                  // by tensor index
  std::map<int, std::vector<float>> consts;   // by tensor index
  std::vector<int> inputs, outputs;
};

// Region is a shared memory region the host attached, mapped MAP_SHARED.
class Region {
 public:
  Region(uint8_t* data, size_t size) : data_(data), size_(size) {}
  ~Region() { munmap(data_, size_); }
  Region(const Region&) = delete;
  Region& operator=(const Region&) = delete;

  // slice is bytes [off, off+n) of the region, or nullptr when they are not
  // all inside it.
  uint8_t* slice(uint64_t off, uint64_t n) const {
    if (off > size_ || n > size_ - off) return nullptr;
    return data_ + off;
  }
  size_t size() const { return size_; }

 private:
  uint8_t* data_;
  size_t size_;
};

// openRegion opens and maps the region file the host made at path, after
// checking it as delego's own plugins do: a regular file of exactly size
// bytes, owned by this user, closed to group and others. On failure it
// returns nullptr and says why in *err.
std::unique_ptr<Region> openRegion(const std::string& path, uint64_t size, std::string* err) {
  int fd = open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    *err = "shared memory: open " + path + ": " + strerror(errno);
    return nullptr;
  }
  struct stat st;
  std::string why;
  if (fstat(fd, &st) != 0) {
    why = std::string("stat: ") + strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    why = "is not a regular file";
  } else if (static_cast<uint64_t>(st.st_size) != size) {
    why = "holds " + std::to_string(st.st_size) + " bytes, want " + std::to_string(size);
  } else if (st.st_uid != geteuid()) {
    why = "belongs to user " + std::to_string(st.st_uid) + ", not " + std::to_string(geteuid());
  } else if (st.st_mode & 077) {
    char mode[8];
    snprintf(mode, sizeof mode, "%o", st.st_mode & 0777);
    why = std::string("has mode ") + mode + "; want it closed to group and others";
  }
  void* data = MAP_FAILED;
  if (why.empty()) {
    data = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (data == MAP_FAILED) why = std::string("map: ") + strerror(errno);
  }
  close(fd);
  if (!why.empty()) {
    *err = "shared memory: " + path + " " + why;
    return nullptr;
  }
  return std::make_unique<Region>(static_cast<uint8_t*>(data), size);
}

// Compiled is a partition with its region; Attach, Invoke and Release on
// one partition take turns (mu), different partitions run concurrently.
struct Compiled {
  explicit Compiled(Partition p) : part(std::move(p)) {}
  const Partition part;
  std::mutex mu;
  std::unique_ptr<Region> region;
  // scratch holds, by tensor index, the results of its ops and the inputs
  // that came unaligned, kept from one Invoke to the next.
  std::map<int, std::vector<float>> scratch;
};

grpc::Status invalid(const std::string& msg) { return {grpc::StatusCode::INVALID_ARGUMENT, msg}; }

// clampOf sets op's clamp for a fused activation; false for one it does not
// run (TANH, SIGN_BIT).
bool clampOf(tflite::ActivationFunctionType act, Op* op) {
  switch (act) {
    case tflite::ActivationFunctionType_NONE:
      op->clamp = false;
      return true;
    case tflite::ActivationFunctionType_RELU:
      op->clamp = true, op->lo = 0, op->hi = INFINITY;
      return true;
    case tflite::ActivationFunctionType_RELU_N1_TO_1:
      op->clamp = true, op->lo = -1, op->hi = 1;
      return true;
    case tflite::ActivationFunctionType_RELU6:
      op->clamp = true, op->lo = 0, op->hi = 6;
      return true;
    default:
      return false;
  }
}

// parse reads a partition (a .tflite flatbuffer) and checks that this plugin
// runs it: ADD and MUL on float32 only, in an order where every operand is
// an input, a constant or an earlier result, and with shapes that
// broadcast.
grpc::Status parse(const std::string& bytes, Partition* p) {
  auto buf = reinterpret_cast<const uint8_t*>(bytes.data());
  flatbuffers::Verifier verifier(buf, bytes.size());
  if (!tflite::VerifyModelBuffer(verifier)) return invalid("the partition is not a valid .tflite flatbuffer");
  const tflite::Model* m = tflite::GetModel(buf);
  if (!m->subgraphs() || m->subgraphs()->size() == 0) return invalid("the partition has no subgraph");
  const tflite::SubGraph* sg = m->subgraphs()->Get(0);
  const auto* tensors = sg->tensors();
  const size_t ntensors = tensors ? tensors->size() : 0;
  p->shapes.assign(ntensors, Shape{});
  std::vector<bool> known(ntensors, false);  // has a value before the op at hand runs
  for (size_t i = 0; i < ntensors; i++) {
    const tflite::Tensor* t = tensors->Get(i);
    if (t->shape())
      for (int32_t d : *t->shape()) p->shapes[i].push_back(d);
    const auto* b = m->buffers() && t->buffer() < m->buffers()->size() ? m->buffers()->Get(t->buffer()) : nullptr;
    if (b && b->data() && b->data()->size() > 0) {
      if (t->type() != tflite::TensorType_FLOAT32)
        return invalid("constant tensor " + std::to_string(i) + " is " + tflite::EnumNameTensorType(t->type()) +
                       "; this plugin runs float32 only");
      int64_t n = elements(p->shapes[i]);
      if (n < 0 || static_cast<uint64_t>(n) * 4 != b->data()->size())
        return invalid("constant tensor " + std::to_string(i) + " of shape " + shapeText(p->shapes[i]) + " holds " +
                       std::to_string(b->data()->size()) + " bytes");
      std::vector<float> v(n);
      memcpy(v.data(), b->data()->data(), n * 4);
      p->consts.emplace(static_cast<int>(i), std::move(v));
      known[i] = true;
    }
  }
  auto index = [&](int32_t t, const char* what, int* out) -> grpc::Status {
    if (t < 0 || static_cast<size_t>(t) >= ntensors)
      return invalid(std::string(what) + " names tensor " + std::to_string(t) + " of " + std::to_string(ntensors));
    if (tensors->Get(t)->type() != tflite::TensorType_FLOAT32)
      return invalid(std::string(what) + " is tensor " + std::to_string(t) + " of type " +
                     tflite::EnumNameTensorType(tensors->Get(t)->type()) + "; this plugin runs float32 only");
    *out = t;
    return grpc::Status::OK;
  };
  if (sg->inputs())
    for (int32_t t : *sg->inputs()) {
      int i;
      if (auto s = index(t, "an input", &i); !s.ok()) return s;
      p->inputs.push_back(i);
      known[i] = true;
    }
  const auto* ops = sg->operators();
  for (size_t k = 0; ops && k < ops->size(); k++) {
    const tflite::Operator* o = ops->Get(k);
    const std::string where = "operator " + std::to_string(k);
    if (!m->operator_codes() || o->opcode_index() >= m->operator_codes()->size())
      return invalid(where + " has no operator code");
    const tflite::OperatorCode* oc = m->operator_codes()->Get(o->opcode_index());
    // The larger of the two fields is the op (the schema's rule since
    // builtin_code was added).
    auto code = std::max(static_cast<int32_t>(oc->deprecated_builtin_code()), static_cast<int32_t>(oc->builtin_code()));
    Op op;
    tflite::ActivationFunctionType act = tflite::ActivationFunctionType_NONE;
    if (code == tflite::BuiltinOperator_ADD && oc->version() <= kAddMaxVersion) {
      if (auto opts = o->builtin_options_as_AddOptions()) act = opts->fused_activation_function();
    } else if (code == tflite::BuiltinOperator_MUL && oc->version() <= kMulMaxVersion) {
      op.mul = true;
      if (auto opts = o->builtin_options_as_MulOptions()) act = opts->fused_activation_function();
    } else {
      const char* name = code >= 0 && code <= tflite::BuiltinOperator_MAX
                             ? tflite::EnumNameBuiltinOperator(static_cast<tflite::BuiltinOperator>(code))
                             : "";
      return invalid(where + " is " + (*name ? name : "op " + std::to_string(code)) + " version " +
                     std::to_string(oc->version()) + "; this plugin runs ADD versions 1-" +
                     std::to_string(kAddMaxVersion) + " and MUL versions 1-" + std::to_string(kMulMaxVersion));
    }
    if (!clampOf(act, &op))
      return invalid(where + " has the fused activation " + tflite::EnumNameActivationFunctionType(act) +
                     "; this plugin runs NONE, RELU, RELU_N1_TO_1 and RELU6");
    if (!o->inputs() || o->inputs()->size() != 2 || !o->outputs() || o->outputs()->size() != 1)
      return invalid(where + " does not have two inputs and one output");
    if (auto s = index(o->inputs()->Get(0), (where + "'s first input").c_str(), &op.a); !s.ok()) return s;
    if (auto s = index(o->inputs()->Get(1), (where + "'s second input").c_str(), &op.b); !s.ok()) return s;
    if (auto s = index(o->outputs()->Get(0), (where + "'s output").c_str(), &op.out); !s.ok()) return s;
    for (int t : {op.a, op.b})
      if (!known[t])
        return invalid(where + " reads tensor " + std::to_string(t) + " before anything has written it");
    if (known[op.out]) return invalid(where + " writes tensor " + std::to_string(op.out) + ", which already has a value");
    Shape out;
    if (!broadcast(p->shapes[op.a], p->shapes[op.b], &out))
      return invalid(where + " takes shapes " + shapeText(p->shapes[op.a]) + " and " + shapeText(p->shapes[op.b]) +
                     ", which do not broadcast");
    known[op.out] = true;
    p->ops.push_back(op);
  }
  if (sg->outputs())
    for (int32_t t : *sg->outputs()) {
      int i;
      if (auto s = index(t, "an output", &i); !s.ok()) return s;
      if (!known[i]) return invalid("output tensor " + std::to_string(i) + " is never written");
      p->outputs.push_back(i);
    }
  return grpc::Status::OK;
}

// Value is a tensor's value during an Invoke: its shape and elements.
struct Value {
  Shape shape;
  const float* data = nullptr;
};

// broadcastRun computes x*y (mul) or x+y into z, of shape zs, from x and y
// of shapes xs and ys that broadcast to it.
void broadcastRun(bool mul, const float* x, const Shape& xs, const float* y, const Shape& ys, float* z,
                  const Shape& zs) {
  // Strides of x and y over z's dimensions (0 where they broadcast).
  const size_t rank = zs.size();
  std::vector<int64_t> sx(rank, 0), sy(rank, 0), idx(rank, 0);
  for (auto [shape, strides] : {std::pair{&xs, &sx}, std::pair{&ys, &sy}}) {
    int64_t stride = 1;
    for (size_t i = 0; i < shape->size(); i++) {
      size_t d = shape->size() - 1 - i, o = rank - 1 - i;
      (*strides)[o] = (*shape)[d] == 1 ? 0 : stride;
      stride *= (*shape)[d];
    }
  }
  const int64_t n = elements(zs);
  int64_t ix = 0, iy = 0;
  for (int64_t i = 0; i < n; i++) {
    z[i] = mul ? x[ix] * y[iy] : x[ix] + y[iy];
    for (size_t d = rank; d-- > 0;) {  // the next index, last dimension fastest
      ix += sx[d];
      iy += sy[d];
      if (++idx[d] < zs[d]) break;
      ix -= sx[d] * idx[d];
      iy -= sy[d] * idx[d];
      idx[d] = 0;
    }
  }
}

// run computes op on a and b into out, broadcasting: out's shape is theirs
// broadcast, its elements in storage. It is false when they do not
// broadcast (inputs resized since Compile).
bool run(const Op& op, const Value& a, const Value& b, std::vector<float>* storage, Value* out) {
  if (!broadcast(a.shape, b.shape, &out->shape)) return false;
  const int64_t n = elements(out->shape);
  storage->resize(n);
  out->data = storage->data();
  float* z = storage->data();
  const float *x = a.data, *y = b.data;
  if (a.shape == b.shape) {  // the common case, in loops the compiler vectorises
    if (op.mul) {
      for (int64_t i = 0; i < n; i++) z[i] = x[i] * y[i];
    } else {
      for (int64_t i = 0; i < n; i++) z[i] = x[i] + y[i];
    }
  } else {
    broadcastRun(op.mul, x, a.shape, y, b.shape, z, out->shape);
  }
  if (op.clamp) {
    const float lo = op.lo, hi = op.hi;
    for (int64_t i = 0; i < n; i++) z[i] = std::min(std::max(z[i], lo), hi);
  }
  return true;
}

// The tensor type code of float32 on the wire (the schema's TensorType).
constexpr int32_t kFloat32 = tflite::TensorType_FLOAT32;

// DelegateService serves delego's Delegate service.
class DelegateService final : public pb::Delegate::Service {
 public:
  explicit DelegateService(int protocol) : protocol_(protocol) {}

  grpc::Status Describe(grpc::ServerContext*, const pb::DescribeRequest*, pb::DescribeResponse* r) override {
    r->set_name(kName);
    r->set_version(kVersion);
    r->set_protocol_version(protocol_);
    for (auto [code, max] : {std::pair{tflite::BuiltinOperator_ADD, kAddMaxVersion},
                             std::pair{tflite::BuiltinOperator_MUL, kMulMaxVersion}}) {
      pb::OpSupport* s = r->add_builtins();
      s->set_builtin(code);
      s->set_min_version(1);
      s->set_max_version(max);
      s->add_types(kFloat32);
    }
    pb::Device* d = r->add_devices();
    d->set_name("cpu");
    d->set_description("the host's CPU, in plain C++ loops");
    r->set_usable(true);
    r->set_has_checker(false);
    r->set_region_fds(false);  // regions come by path
    // Protocol 2: it reads no settings and takes no options, and says so
    // (honours and options stay empty): the host warns about settings given
    // to it and refuses options.
    r->set_configurable(true);
    return grpc::Status::OK;
  }

  grpc::Status Compile(grpc::ServerContext*, const pb::CompileRequest* req, pb::CompileResponse* r) override {
    Partition p;
    if (grpc::Status s = parse(req->model(), &p); !s.ok()) return s;
    std::lock_guard<std::mutex> lock(mu_);
    parts_.emplace(++next_, std::make_shared<Compiled>(std::move(p)));
    r->set_handle(next_);
    return grpc::Status::OK;
  }

  grpc::Status Attach(grpc::ServerContext*, const pb::AttachRequest* req, pb::AttachResponse* r) override {
    std::shared_ptr<Compiled> c = find(req->handle());
    if (!c) return notFound(req->handle());
    if (req->fd_token() != 0)
      return invalid("a region came as a file descriptor, but this plugin takes regions by path (region_fds is false)");
    if (req->path().empty() || req->size() == 0 || req->size() > (uint64_t{1} << 34))
      return invalid("shared memory region of " + std::to_string(req->size()) + " bytes at \"" + req->path() + "\"");
    std::string err;
    std::unique_ptr<Region> region = openRegion(req->path(), req->size(), &err);
    if (!region) return {grpc::StatusCode::INTERNAL, err};
    std::lock_guard<std::mutex> lock(c->mu);
    c->region = std::move(region);  // the old one, if any, is unmapped
    r->set_doorbell(false);
    return grpc::Status::OK;
  }

  grpc::Status Invoke(grpc::ServerContext*, const pb::InvokeRequest* req, pb::InvokeResponse* r) override {
    std::shared_ptr<Compiled> c = find(req->handle());
    if (!c) return notFound(req->handle());
    std::lock_guard<std::mutex> lock(c->mu);
    const Partition& p = c->part;
    if (req->inputs_size() != static_cast<int>(p.inputs.size()) ||
        req->outputs_size() != static_cast<int>(p.outputs.size()))
      return invalid(std::to_string(req->inputs_size()) + " inputs and " + std::to_string(req->outputs_size()) +
                     " outputs; the partition has " + std::to_string(p.inputs.size()) + " and " +
                     std::to_string(p.outputs.size()));
    std::map<int, Value> values;
    for (const auto& [t, v] : p.consts) values[t] = Value{p.shapes[t], v.data()};
    for (int i = 0; i < req->inputs_size(); i++) {
      const pb::Tensor& in = req->inputs(i);
      const std::string where = "input " + std::to_string(i);
      const uint8_t* bytes = nullptr;
      Shape shape;
      if (grpc::Status s = locate(in, where, c->region.get(), &shape, &bytes); !s.ok()) return s;
      if (!bytes) return invalid(where + " has no data");
      Value& v = values[p.inputs[i]];
      v.shape = shape;
      if (reinterpret_cast<uintptr_t>(bytes) % alignof(float) == 0) {
        v.data = reinterpret_cast<const float*>(bytes);
      } else {  // inline bytes need not be aligned
        std::vector<float>& copy = c->scratch[p.inputs[i]];
        copy.resize(elements(shape));
        memcpy(copy.data(), bytes, in.bytes());
        v.data = copy.data();
      }
    }
    for (size_t k = 0; k < p.ops.size(); k++) {
      const Op& op = p.ops[k];
      const Value &a = values[op.a], &b = values[op.b];
      try {
        if (!run(op, a, b, &c->scratch[op.out], &values[op.out]))
          return invalid("operator " + std::to_string(k) + " takes shapes " + shapeText(a.shape) + " and " +
                         shapeText(b.shape) + ", which do not broadcast");
      } catch (const std::bad_alloc&) {
        return {grpc::StatusCode::RESOURCE_EXHAUSTED, "operator " + std::to_string(k) + ": no memory for its result (" +
                                                          shapeText(a.shape) + " and " + shapeText(b.shape) + ")"};
      }
    }
    for (int i = 0; i < req->outputs_size(); i++) {
      const pb::Tensor& asked = req->outputs(i);
      const std::string where = "output " + std::to_string(i);
      const Value& v = values[p.outputs[i]];
      Shape shape;
      uint8_t* dst = nullptr;
      if (grpc::Status s = locate(asked, where, c->region.get(), &shape, &dst); !s.ok()) return s;
      if (shape != v.shape)
        return invalid(where + " was asked as " + shapeText(shape) + ", but the partition computes " +
                       shapeText(v.shape) + " from these inputs");
      pb::Tensor* out = r->add_outputs();
      out->set_type(kFloat32);
      *out->mutable_shape() = asked.shape();
      out->set_bytes(asked.bytes());
      if (asked.has_shm()) {
        if (asked.bytes() > 0) memcpy(dst, v.data, asked.bytes());
        *out->mutable_shm() = asked.shm();
      } else {
        out->set_inline_(v.data, asked.bytes());
      }
    }
    return grpc::Status::OK;
  }

  grpc::Status Release(grpc::ServerContext*, const pb::ReleaseRequest* req, pb::ReleaseResponse*) override {
    std::lock_guard<std::mutex> lock(mu_);
    // An Invoke still running on it keeps it (and its region) until it ends.
    if (parts_.erase(req->handle()) == 0) return notFound(req->handle());
    return grpc::Status::OK;
  }

 private:
  std::shared_ptr<Compiled> find(uint64_t handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = parts_.find(handle);
    return it == parts_.end() ? nullptr : it->second;
  }

  static grpc::Status notFound(uint64_t handle) {
    return {grpc::StatusCode::NOT_FOUND, "no compiled partition " + std::to_string(handle)};
  }

  // locate checks tensor t of a request (a float32 tensor whose bytes fit
  // its shape) and finds its bytes: inline, in region, or none (an output
  // to send back inline). It takes a const request, so an inline tensor's
  // bytes are read-only; only region bytes are written.
  template <typename Bytes>
  static grpc::Status locate(const pb::Tensor& t, const std::string& where, const Region* region, Shape* shape,
                             Bytes** bytes) {
    if (t.type() != kFloat32)
      return invalid(where + " has type " + std::to_string(t.type()) + "; this plugin runs float32 only");
    shape->assign(t.shape().begin(), t.shape().end());
    int64_t n = elements(*shape);
    if (n < 0 || static_cast<uint64_t>(n) * 4 != t.bytes())
      return invalid(where + " of shape " + shapeText(*shape) + " says it holds " + std::to_string(t.bytes()) + " bytes");
    *bytes = nullptr;
    if (t.has_shm()) {
      if (!region) return invalid(where + " is in shared memory, but no region is attached");
      if (t.shm().length() != t.bytes())
        return invalid(where + " has " + std::to_string(t.shm().length()) + " bytes of shared memory for " +
                       std::to_string(t.bytes()) + " bytes");
      *bytes = region->slice(t.shm().offset(), t.shm().length());
      if (!*bytes)
        return invalid(where + ": range [" + std::to_string(t.shm().offset()) + ", +" +
                       std::to_string(t.shm().length()) + ") is outside the " + std::to_string(region->size()) +
                       "-byte region");
    } else if (t.has_inline_()) {
      if constexpr (std::is_const_v<Bytes>) {
        if (t.inline_().size() != t.bytes())
          return invalid(where + " has " + std::to_string(t.inline_().size()) + " bytes inline for " +
                         std::to_string(t.bytes()) + " bytes");
        *bytes = reinterpret_cast<Bytes*>(t.inline_().data());
      }
    }
    return grpc::Status::OK;
  }

  const int protocol_;
  std::mutex mu_;
  uint64_t next_ = 0;
  std::map<uint64_t, std::shared_ptr<Compiled>> parts_;
};

// Stop is the plugin's end: go-plugin's Shutdown, or the host going away,
// ask for it, and main waits for it.
class Stop {
 public:
  void request() {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return stopped_; });
  }
  // waitFor waits at most d for the end, and says whether it has come.
  bool waitFor(std::chrono::milliseconds d) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, d, [this] { return stopped_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopped_ = false;
};

// ControllerService serves go-plugin's GRPCController: Shutdown stops the
// plugin once it has answered.
class ControllerService final : public plugin::GRPCController::Service {
 public:
  explicit ControllerService(Stop* stop) : stop_(stop) {}
  grpc::Status Shutdown(grpc::ServerContext*, const plugin::Empty*, plugin::Empty*) override {
    stop_->request();
    return grpc::Status::OK;
  }

 private:
  Stop* stop_;
};

// negotiate is the protocol version to speak: the highest of kProtocols in
// offered, go-plugin's $PLUGIN_PROTOCOL_VERSIONS (a comma-separated list);
// when there is none in common, this plugin's highest, which the host then
// refuses naming both versions (as go-plugin's Go plugins do).
int negotiate(const char* offered) {
  int best = 0;
  std::istringstream in(offered ? offered : "");
  for (std::string v; std::getline(in, v, ',');)
    for (int mine : kProtocols)
      if (v == std::to_string(mine)) best = std::max(best, mine);
  return best ? best : kProtocols.back();
}

// listenUnix listens on a new Unix socket in the directory the host named
// (go-plugin's $PLUGIN_UNIX_SOCKET_DIR), else $TMPDIR or /tmp, and says its
// path; -1 when it cannot, with why in *err.
int listenUnix(std::string* path, std::string* err) {
  const char* dir = getenv("PLUGIN_UNIX_SOCKET_DIR");
  if (!dir || !*dir) dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = "/tmp";
  *path = std::string(dir) + "/plugin-XXXXXX";
  int tmp = mkstemp(path->data());  // a fresh name; the socket takes its place
  if (tmp < 0) {
    *err = "make a socket name in " + std::string(dir) + ": " + strerror(errno);
    return -1;
  }
  close(tmp);
  unlink(path->c_str());
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path->size() >= sizeof addr.sun_path) {
    *err = "the socket path " + *path + " is too long for a Unix socket";
    return -1;
  }
  memcpy(addr.sun_path, path->c_str(), path->size() + 1);
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, 64) != 0) {
    *err = "listen on " + *path + ": " + strerror(errno);
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

// serveOwnUser accepts the connections to listener and hands those whose
// process runs as this plugin's user (SO_PEERCRED) to server; it closes the
// others, as the protocol asks of a plugin without mTLS. It returns when
// the listener fails (closed).
void serveOwnUser(int listener, grpc::Server* server) {
  for (;;) {
    int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != geteuid()) {
      fprintf(stderr,
              "delego plugin %s: refused a connection from process %d of user %d: only user %d, who started this "
              "plugin, may use it\n",
              kName, static_cast<int>(cred.pid), static_cast<int>(cred.uid), static_cast<int>(geteuid()));
      close(fd);
      continue;
    }
    grpc::AddInsecureChannelFromFd(server, fd);
  }
}

}  // namespace

int main() {
  const char* cookie = getenv(kCookieKey);
  if (!cookie || strcmp(cookie, kCookieValue) != 0) {
    fprintf(stderr,
            "This binary is a delego delegate plugin (%s): delego starts it itself. Put it in a plugin folder "
            "and run delego with --delegate %s.\n",
            kName, kName);
    return 1;
  }
  if (const char* cert = getenv("PLUGIN_CLIENT_CERT"); cert && *cert) {
    fprintf(stderr, "delego plugin %s: the host asked for go-plugin's automatic mTLS, which this plugin does not "
            "implement; open it without mTLS\n", kName);
    return 1;
  }
  // Regions come by path: the region channel delego may pass is not used.
  if (const char* fd = getenv("DELEGO_PLUGIN_REGION_FD"); fd && atoi(fd) > 2) close(atoi(fd));
  // A Ctrl-C reaches the host and its plugins alike; the host decides when
  // its plugins stop.
  signal(SIGINT, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);

  const int protocol = negotiate(getenv("PLUGIN_PROTOCOL_VERSIONS"));
  std::string path, err;
  const int listener = listenUnix(&path, &err);
  if (listener < 0) {
    fprintf(stderr, "delego plugin %s: %s\n", kName, err.c_str());
    return 1;
  }
  Stop stop;
  DelegateService delegate(protocol);
  ControllerService controller(&stop);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  // No listening port of gRPC's own: connections come from serveOwnUser,
  // which checks who is calling first.
  builder.SetMaxReceiveMessageSize(INT32_MAX);
  builder.SetMaxSendMessageSize(INT32_MAX);
  builder.RegisterService(&delegate);
  builder.RegisterService(&controller);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    fprintf(stderr, "delego plugin %s: the gRPC server did not start\n", kName);
    return 1;
  }
  server->GetHealthCheckService()->SetServingStatus("plugin", true);
  std::thread acceptor(serveOwnUser, listener, server.get());

  // The handshake is the only thing ever written to stdout; whatever else a
  // library prints there goes to stderr.
  printf("1|%d|unix|%s|grpc\n", protocol, path.c_str());
  fflush(stdout);
  dup2(STDERR_FILENO, STDOUT_FILENO);

  // The host going away (this process handed to another parent) ends it
  // too, as it ends delego's Go plugins.
  std::thread watcher([parent = getppid(), &stop] {
    while (!stop.waitFor(std::chrono::seconds(1))) {
      if (getppid() != parent) {
        fprintf(stderr, "delego plugin %s: host process %d went away; exiting\n", kName, static_cast<int>(parent));
        stop.request();
      }
    }
  });

  stop.wait();
  unlink(path.c_str());
  shutdown(listener, SHUT_RDWR);  // ends serveOwnUser's accept
  acceptor.join();
  close(listener);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  watcher.join();
  return 0;
}
