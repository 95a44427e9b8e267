// The Vulkan runtime: instance, validation messenger, device choice, queue, memory, submission.
#include "vulkan/runtime/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "core/comm.h"

namespace ts::vk {

const char* result_name(VkResult r) {
  switch (r) {
#define TS_CASE(x) case x: return #x;
    TS_CASE(VK_SUCCESS) TS_CASE(VK_NOT_READY) TS_CASE(VK_TIMEOUT) TS_CASE(VK_INCOMPLETE)
    TS_CASE(VK_ERROR_OUT_OF_HOST_MEMORY) TS_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    TS_CASE(VK_ERROR_INITIALIZATION_FAILED) TS_CASE(VK_ERROR_DEVICE_LOST) TS_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    TS_CASE(VK_ERROR_LAYER_NOT_PRESENT) TS_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    TS_CASE(VK_ERROR_FEATURE_NOT_PRESENT) TS_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    TS_CASE(VK_ERROR_TOO_MANY_OBJECTS) TS_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    TS_CASE(VK_ERROR_FRAGMENTED_POOL) TS_CASE(VK_ERROR_OUT_OF_POOL_MEMORY) TS_CASE(VK_ERROR_UNKNOWN)
#undef TS_CASE
    default: return "VK_RESULT_UNKNOWN";
  }
}

void vk_check(VkResult r, const char* call) {
  if (r == VK_SUCCESS) return;
  const std::string s(call);
  fail("{} failed: {} ({})", s.substr(0, s.find('(')), result_name(r), static_cast<int>(r));
}

namespace {

VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                          VkDebugUtilsMessageTypeFlagsEXT,
                                          const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  if (severity >= VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT && data && data->pMessage)
    static_cast<Context*>(user)->add_message(data->pMessage);
  return VK_FALSE;  // never abort the call: the op fails after its fence instead
}

bool has_layer(const char* name) {
  uint32_t n = 0;
  if (vkEnumerateInstanceLayerProperties(&n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkLayerProperties> layers(n);
  if (vkEnumerateInstanceLayerProperties(&n, layers.data()) != VK_SUCCESS) return false;
  for (const auto& l : layers)
    if (std::strcmp(l.layerName, name) == 0) return true;
  return false;
}

bool layer_has_extension(const char* layer, const char* ext) {
  uint32_t n = 0;
  if (vkEnumerateInstanceExtensionProperties(layer, &n, nullptr) != VK_SUCCESS) return false;
  std::vector<VkExtensionProperties> e(n);
  if (vkEnumerateInstanceExtensionProperties(layer, &n, e.data()) != VK_SUCCESS) return false;
  for (const auto& x : e)
    if (std::strcmp(x.extensionName, ext) == 0) return true;
  return false;
}

bool validation_wanted() {
  const char* v = std::getenv("TOUCHSTONE_VULKAN_VALIDATION");
  return !(v && std::strcmp(v, "0") == 0);
}

// The queue family with compute (preferring one without graphics), or -1.
int compute_family(VkPhysicalDevice d) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(d, &n, nullptr);
  std::vector<VkQueueFamilyProperties> fams(n);
  vkGetPhysicalDeviceQueueFamilyProperties(d, &n, fams.data());
  int best = -1;
  for (uint32_t i = 0; i < n; ++i) {
    if (!(fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT)) continue;
    if (best < 0 || !(fams[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace

void Context::add_message(std::string m) {
  std::lock_guard<std::mutex> lock(mu_);
  messages_.push_back(std::move(m));
}

std::string Context::take_messages() {
  std::lock_guard<std::mutex> lock(mu_);
  std::string all;
  for (const auto& m : messages_) all += (all.empty() ? "" : "\n") + m;
  messages_.clear();
  return all;
}

void Context::check_messages(const std::string& what) {
  const std::string m = take_messages();
  check(m.empty(), "Vulkan validation reported a problem while {}: {}", what, m);
}

Context::Context() {
  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "touchstone";
  app.apiVersion = VK_API_VERSION_1_1;  // subgroups and 16-bit storage are core in 1.1
  std::vector<const char*> layers, exts;
  const bool validate = validation_wanted() && has_layer("VK_LAYER_KHRONOS_validation");
  if (validate) {
    layers.push_back("VK_LAYER_KHRONOS_validation");
    exts.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }
  VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  ici.pApplicationInfo = &app;
  ici.enabledLayerCount = static_cast<uint32_t>(layers.size());
  ici.ppEnabledLayerNames = layers.data();
  ici.enabledExtensionCount = static_cast<uint32_t>(exts.size());
  ici.ppEnabledExtensionNames = exts.data();
  VkDebugUtilsMessengerCreateInfoEXT mci{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  mci.messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  mci.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                    VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  mci.pfnUserCallback = on_message;
  mci.pUserData = this;
  // Synchronization validation too: a missing barrier between dispatches is reported, not just
  // wrong API use.
  const VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT vf{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  vf.enabledValidationFeatureCount = 1;
  vf.pEnabledValidationFeatures = enables;
  if (validate) {
    ici.pNext = &mci;  // also catches messages of vkCreateInstance itself
    if (layer_has_extension("VK_LAYER_KHRONOS_validation", VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME)) {
      exts.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);
      ici.enabledExtensionCount = static_cast<uint32_t>(exts.size());
      ici.ppEnabledExtensionNames = exts.data();
      // ici -> vf -> mci: mci itself keeps pNext null, as vkCreateDebugUtilsMessengerEXT requires.
      ici.pNext = &vf;
      vf.pNext = &mci;
    }
  }
  const VkResult r = vkCreateInstance(&ici, nullptr, &instance_);
  check(r == VK_SUCCESS || !validate,
        "vkCreateInstance failed with the validation layer on: {} (TOUCHSTONE_VULKAN_VALIDATION=0 runs without it)",
        result_name(r));
  check(r == VK_SUCCESS, "vkCreateInstance failed: {} (no Vulkan driver installed?)", result_name(r));
  try {
    if (validate) {
      auto create = reinterpret_cast<PFN_vkCreateDebugUtilsMessengerEXT>(
          vkGetInstanceProcAddr(instance_, "vkCreateDebugUtilsMessengerEXT"));
      check(create != nullptr, "vkCreateDebugUtilsMessengerEXT is missing though VK_EXT_debug_utils is enabled");
      TS_VK(create(instance_, &mci, nullptr, &messenger_));
    }

    uint32_t n = 0;
    TS_VK(vkEnumeratePhysicalDevices(instance_, &n, nullptr));
    check(n > 0, "no Vulkan physical device");
    std::vector<VkPhysicalDevice> devs(n);
    TS_VK(vkEnumeratePhysicalDevices(instance_, &n, devs.data()));

    // Device choice: TOUCHSTONE_VULKAN_DEVICE as an index or a name substring; else the first with compute.
    const char* want = std::getenv("TOUCHSTONE_VULKAN_DEVICE");
    std::string names;
    std::vector<VkPhysicalDevice> matches;
    for (uint32_t i = 0; i < n; ++i) {
      VkPhysicalDeviceProperties p;
      vkGetPhysicalDeviceProperties(devs[i], &p);
      names += fmt::format("{}{}: {}", names.empty() ? "" : ", ", i, p.deviceName);
      const bool match = !want || !*want || std::to_string(i) == want || std::strstr(p.deviceName, want);
      if (match && compute_family(devs[i]) >= 0) matches.push_back(devs[i]);
    }
    // Named: the first that matches. Else ranks of an MPI launch take one device each, round robin.
    if (!matches.empty())
      phys_ = want && *want ? matches[0] : matches[static_cast<size_t>(world().rank()) % matches.size()];
    check(phys_ != VK_NULL_HANDLE, "no Vulkan device with a compute queue matches TOUCHSTONE_VULKAN_DEVICE='{}' ({})",
          want ? want : "", names);
    family_ = static_cast<uint32_t>(compute_family(phys_));

    vkGetPhysicalDeviceProperties(phys_, &info_.props);
    info_.name = info_.props.deviceName;
    check(info_.props.apiVersion >= VK_API_VERSION_1_1, "{} supports only Vulkan {}.{}; 1.1 is required",
          info_.name, VK_API_VERSION_MAJOR(info_.props.apiVersion), VK_API_VERSION_MINOR(info_.props.apiVersion));
    VkPhysicalDeviceSubgroupProperties sg{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
    VkPhysicalDeviceProperties2 p2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    p2.pNext = &sg;
    vkGetPhysicalDeviceProperties2(phys_, &p2);
    info_.subgroup_size = sg.subgroupSize;
    info_.subgroup_arithmetic = (sg.supportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                                (sg.supportedOperations & VK_SUBGROUP_FEATURE_BASIC_BIT) &&
                                (sg.supportedOperations & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT);

    // F16 arithmetic is an extension on a 1.1 device (core in 1.2): queried and enabled only where
    // the device lists it (the F16 FMA roof needs it; no op kernel computes in F16). So are packed
    // integer dot products (core in 1.3), which the int8 decode GEMV takes where asked for.
    uint32_t next = 0;
    TS_VK(vkEnumerateDeviceExtensionProperties(phys_, nullptr, &next, nullptr));
    std::vector<VkExtensionProperties> dev_exts(next);
    TS_VK(vkEnumerateDeviceExtensionProperties(phys_, nullptr, &next, dev_exts.data()));
    bool has_f16_ext = false, has_dot_ext = false;
    for (const auto& e : dev_exts) {
      has_f16_ext |= std::strcmp(e.extensionName, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME) == 0;
      has_dot_ext |= std::strcmp(e.extensionName, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME) == 0;
    }
    VkPhysicalDeviceShaderFloat16Int8FeaturesKHR f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR dot{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
    VkPhysicalDevice16BitStorageFeatures s16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    VkPhysicalDeviceFeatures2 f2{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    f2.pNext = &s16;
    if (has_f16_ext) s16.pNext = &f16;
    if (has_dot_ext) dot.pNext = s16.pNext, s16.pNext = &dot;
    vkGetPhysicalDeviceFeatures2(phys_, &f2);
    info_.storage16 = s16.storageBuffer16BitAccess;
    info_.int16 = f2.features.shaderInt16;
    info_.float16 = has_f16_ext && f16.shaderFloat16;
    info_.int_dot = has_dot_ext && dot.shaderIntegerDotProduct;
    if (info_.int_dot) {
      VkPhysicalDeviceShaderIntegerDotProductPropertiesKHR dp{
          VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_PROPERTIES_KHR};
      VkPhysicalDeviceProperties2 pp{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
      pp.pNext = &dp;
      vkGetPhysicalDeviceProperties2(phys_, &pp);
      info_.int_dot_fast = dp.integerDotProduct4x8BitPackedMixedSignednessAccelerated;
    }

    uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys_, &nf, nullptr);
    std::vector<VkQueueFamilyProperties> fams(nf);
    vkGetPhysicalDeviceQueueFamilyProperties(phys_, &nf, fams.data());
    info_.timestamps = fams[family_].timestampValidBits > 0 && info_.props.limits.timestampPeriod > 0;
    info_.timestamp_period_ns = info_.props.limits.timestampPeriod;
    info_.timestamp_bits = fams[family_].timestampValidBits;
    vkGetPhysicalDeviceMemoryProperties(phys_, &mem_);

    // Enable only what the device has; ops whose variants need a missing feature report unsupported.
    VkPhysicalDevice16BitStorageFeatures en16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    en16.storageBuffer16BitAccess = s16.storageBuffer16BitAccess;
    VkPhysicalDeviceShaderFloat16Int8FeaturesKHR en_f16{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES_KHR};
    en_f16.shaderFloat16 = VK_TRUE;
    if (info_.float16) en16.pNext = &en_f16;
    VkPhysicalDeviceShaderIntegerDotProductFeaturesKHR en_dot{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_INTEGER_DOT_PRODUCT_FEATURES_KHR};
    en_dot.shaderIntegerDotProduct = VK_TRUE;
    if (info_.int_dot) en_dot.pNext = en16.pNext, en16.pNext = &en_dot;
    VkPhysicalDeviceFeatures2 en{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    en.pNext = &en16;
    en.features.shaderInt16 = f2.features.shaderInt16;
    std::vector<const char*> dev_enable;
    if (info_.float16) dev_enable.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
    if (info_.int_dot) dev_enable.push_back(VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
    const float prio = 1.0f;
    VkDeviceQueueCreateInfo qci{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    qci.queueFamilyIndex = family_;
    qci.queueCount = 1;
    qci.pQueuePriorities = &prio;
    VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
    dci.pNext = &en;
    dci.queueCreateInfoCount = 1;
    dci.pQueueCreateInfos = &qci;
    dci.enabledExtensionCount = static_cast<uint32_t>(dev_enable.size());
    dci.ppEnabledExtensionNames = dev_enable.empty() ? nullptr : dev_enable.data();
    TS_VK(vkCreateDevice(phys_, &dci, nullptr, &device_));
    vkGetDeviceQueue(device_, family_, 0, &queue_);

    VkPipelineCacheCreateInfo pci{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
    TS_VK(vkCreatePipelineCache(device_, &pci, nullptr, &pipeline_cache_));
    VkCommandPoolCreateInfo cpi{VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO};
    cpi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    cpi.queueFamilyIndex = family_;
    TS_VK(vkCreateCommandPool(device_, &cpi, nullptr, &pool_));
    VkFenceCreateInfo fci{VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    TS_VK(vkCreateFence(device_, &fci, nullptr, &fence_));
    check_messages("creating the device");
  } catch (...) {
    release();  // members are destroyed by the unwinding; only the Vulkan handles need freeing
    throw;
  }
}

Context::~Context() { release(); }

void Context::release() {
  if (device_) {
    vkDeviceWaitIdle(device_);
    if (fence_) vkDestroyFence(device_, fence_, nullptr);
    if (pool_) vkDestroyCommandPool(device_, pool_, nullptr);
    if (pipeline_cache_) vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
    vkDestroyDevice(device_, nullptr);
    device_ = VK_NULL_HANDLE;
  }
  if (messenger_) {
    auto destroy = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
        vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
    if (destroy) destroy(instance_, messenger_, nullptr);
    messenger_ = VK_NULL_HANDLE;
  }
  if (instance_) vkDestroyInstance(instance_, nullptr);
  instance_ = VK_NULL_HANDLE;
}

uint32_t Context::memory_type(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags prefer) const {
  int fallback = -1;
  for (uint32_t i = 0; i < mem_.memoryTypeCount; ++i) {
    if (!(bits & (1u << i))) continue;
    const VkMemoryPropertyFlags f = mem_.memoryTypes[i].propertyFlags;
    if ((f & want) != want) continue;
    if ((f & prefer) == prefer) return i;
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  check(fallback >= 0, "no Vulkan memory type with properties 0x{:x}", static_cast<unsigned>(want));
  return static_cast<uint32_t>(fallback);
}

VkCommandBuffer Context::begin_one_shot() { return begin(VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT); }

VkCommandBuffer Context::begin_reusable() { return begin(0); }

VkCommandBuffer Context::begin(VkCommandBufferUsageFlags usage) {
  VkCommandBufferAllocateInfo ai{VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO};
  ai.commandPool = pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb;
  TS_VK(vkAllocateCommandBuffers(device_, &ai, &cb));
  VkCommandBufferBeginInfo bi{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  bi.flags = usage;
  const VkResult r = vkBeginCommandBuffer(cb, &bi);
  if (r != VK_SUCCESS) {
    vkFreeCommandBuffers(device_, pool_, 1, &cb);
    vk_check(r, "vkBeginCommandBuffer");
  }
  return cb;
}

void Context::end_one_shot(VkCommandBuffer cb) {
  struct Free {
    Context* c;
    VkCommandBuffer cb;
    ~Free() { vkFreeCommandBuffers(c->device_, c->pool_, 1, &cb); }
  } guard{this, cb};
  TS_VK(vkEndCommandBuffer(cb));
  submit(cb);
}

void Context::submit(VkCommandBuffer cb) {
  VkSubmitInfo si{VK_STRUCTURE_TYPE_SUBMIT_INFO};
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cb;
  TS_VK(vkResetFences(device_, 1, &fence_));
  TS_VK(vkQueueSubmit(queue_, 1, &si, fence_));
  TS_VK(vkWaitForFences(device_, 1, &fence_, VK_TRUE, UINT64_MAX));
}

Buffer::Buffer(Context& ctx, VkDeviceSize bytes, bool host_visible) : ctx_(&ctx), size_(bytes) {
  VkBufferCreateInfo bci{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bci.size = bytes;
  bci.usage = host_visible ? VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT
                           : VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                 VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bci.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  TS_VK(vkCreateBuffer(ctx.device(), &bci, nullptr, &buf_));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(ctx.device(), buf_, &req);
  VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  mai.allocationSize = req.size;
  mai.memoryTypeIndex =
      host_visible ? ctx.memory_type(req.memoryTypeBits,
                                     VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT,
                                     VK_MEMORY_PROPERTY_HOST_CACHED_BIT)
                   : ctx.memory_type(req.memoryTypeBits, 0, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
  const VkResult r = vkAllocateMemory(ctx.device(), &mai, nullptr, &mem_);
  if (r != VK_SUCCESS) {
    vkDestroyBuffer(ctx.device(), buf_, nullptr);
    buf_ = VK_NULL_HANDLE;
    fail("vkAllocateMemory failed for {} bytes: {}", bytes, result_name(r));
  }
  TS_VK(vkBindBufferMemory(ctx.device(), buf_, mem_, 0));
  if (host_visible) TS_VK(vkMapMemory(ctx.device(), mem_, 0, VK_WHOLE_SIZE, 0, &map_));
}

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    this->~Buffer();
    ctx_ = o.ctx_;
    buf_ = o.buf_;
    mem_ = o.mem_;
    size_ = o.size_;
    map_ = o.map_;
    o.buf_ = VK_NULL_HANDLE;
    o.mem_ = VK_NULL_HANDLE;
    o.map_ = nullptr;
  }
  return *this;
}

Buffer::~Buffer() {
  if (!ctx_) return;
  if (buf_) vkDestroyBuffer(ctx_->device(), buf_, nullptr);
  if (mem_) vkFreeMemory(ctx_->device(), mem_, nullptr);  // unmaps implicitly
  buf_ = VK_NULL_HANDLE;
  mem_ = VK_NULL_HANDLE;
}

VkDescriptorPool create_descriptor_pool(Context& ctx, uint32_t sets, uint32_t descriptors) {
  VkDescriptorPoolSize ps{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, std::max(1u, descriptors)};
  VkDescriptorPoolCreateInfo pci{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
  pci.maxSets = std::max(1u, sets);
  pci.poolSizeCount = 1;
  pci.pPoolSizes = &ps;
  VkDescriptorPool pool = VK_NULL_HANDLE;
  TS_VK(vkCreateDescriptorPool(ctx.device(), &pci, nullptr, &pool));
  return pool;
}

VkQueryPool create_timestamp_pool(Context& ctx) {
  if (!ctx.info().timestamps) return VK_NULL_HANDLE;
  VkQueryPoolCreateInfo qci{VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO};
  qci.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qci.queryCount = 2;
  VkQueryPool pool = VK_NULL_HANDLE;
  TS_VK(vkCreateQueryPool(ctx.device(), &qci, nullptr, &pool));
  return pool;
}

double submit_timed(Context& ctx, VkCommandBuffer cb, VkQueryPool timestamps, const std::string& what) {
  const auto t0 = std::chrono::steady_clock::now();
  ctx.submit(cb);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ctx.check_messages(what);
  if (!timestamps) return wall;
  uint64_t ts[2];
  TS_VK(vkGetQueryPoolResults(ctx.device(), timestamps, 0, 2, sizeof ts, ts, sizeof(uint64_t),
                              VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  const uint32_t bits = ctx.info().timestamp_bits;
  const uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
  return static_cast<double>((ts[1] - ts[0]) & mask) * ctx.info().timestamp_period_ns * 1e-9;
}

}  // namespace ts::vk
