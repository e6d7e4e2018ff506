#include "flashlab/sim/hardware/hardware.hpp"

#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/core/json_fields.hpp"
#include "hardware/hardware_fields.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace flashlab::sim {

std::string_view to_string(ComputeUnit u) {
  return u == ComputeUnit::tensor_core ? "tensor" : "cuda";
}

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kHardwareFormat = "flashlab-hardware/1";

using detail::hardware_fail;
using detail::hardware_fields;
using detail::HardwareFields;

const json& field(const json& j, const char* name, const std::string& origin) {
  return hardware_fields(origin).member(j, "", name);
}

double positive_number(const json& j, const char* name, const std::string& origin) {
  return hardware_fields(origin).number(j, "", name);
}

i64 positive_integer(const json& j, const char* name, const std::string& origin) {
  const HardwareFields f = hardware_fields(origin);
  const json& v = f.member(j, "", name);
  if (!v.is_number_integer() || v.get<i64>() < 1) f.wrong(name, "a positive integer", v.dump());
  return v.get<i64>();
}

double optional_number(const json& j, const char* name, const std::string& origin) {
  const HardwareFields f = hardware_fields(origin);
  const json* v = f.find(j, name);
  if (v == nullptr) return 0;
  if (!v->is_number() || v->get<double>() < 0) f.wrong(name, "a non-negative number", v->dump());
  return v->get<double>();
}

std::string optional_string(const json& j, const char* name, const std::string& origin) {
  const HardwareFields f = hardware_fields(origin);
  const json* v = f.find(j, name);
  if (v == nullptr) return {};
  if (!v->is_string()) f.wrong(name, "a string");
  return v->get<std::string>();
}

const AssetKind kPresets{"hardware", "hardware preset", "hardware", "hardware presets", {}, false,
                         AssetKind::AbsentPath::not_found};

}  // namespace

HardwareModel parse_hardware_json(const std::string& text, const std::string& origin) {
  const json j = hardware_fields(origin).parse_object(text);
  if (auto it = j.find("format"); it != j.end() && (!it->is_string() || it->get<std::string>() != kHardwareFormat))
    hardware_fail(origin, std::string("unknown format ") + it->dump() + " (expected \"" + kHardwareFormat + "\")");

  HardwareModel hw;
  const json& name = field(j, "name", origin);
  if (!name.is_string() || name.get<std::string>().empty()) hardware_fail(origin, "field 'name' must be a non-empty string");
  hw.name = name.get<std::string>();
  hw.display_name = optional_string(j, "display_name", origin);
  if (hw.display_name.empty()) hw.display_name = hw.name;
  hw.kind = optional_string(j, "kind", origin);
  if (hw.kind.empty()) hw.kind = "datasheet";
  hw.provenance = optional_string(j, "provenance", origin);
  hw.sm_count = positive_integer(j, "sm_count", origin);
  hw.sram_bytes_per_sm = positive_integer(j, "sram_bytes_per_sm", origin);
  hw.l2_bytes = positive_integer(j, "l2_bytes", origin);
  if (j.contains("l2_partitions")) hw.l2_partitions = positive_integer(j, "l2_partitions", origin);
  hw.max_smem_per_block_bytes = static_cast<i64>(optional_number(j, "max_smem_per_block_bytes", origin));
  hw.hbm_bytes = static_cast<i64>(optional_number(j, "hbm_bytes", origin));
  hw.hbm_bandwidth = positive_number(j, "hbm_bandwidth_gbs", origin) * 1e9;
  hw.sram_bandwidth = positive_number(j, "sram_bandwidth_gbs", origin) * 1e9;
  hw.l2_bandwidth = optional_number(j, "l2_bandwidth_gbs", origin) * 1e9;
  hw.clock_mhz = optional_number(j, "clock_mhz", origin);

  const json& peaks = field(j, "peak_tflops", origin);
  if (!peaks.is_object()) hardware_fail(origin, "field 'peak_tflops' must be an object of dtypes");
  bool any = false;
  for (auto it = peaks.begin(); it != peaks.end(); ++it) {
    const auto dt = parse_dtype(it.key());
    if (!dt) hardware_fail(origin, "peak_tflops: unknown dtype '" + it.key() + "' (expected fp32, fp16, bf16)");
    if (!it->is_object()) hardware_fail(origin, "peak_tflops." + it.key() + " must be an object {\"tensor\": .., \"cuda\": ..}");
    for (auto u = it->begin(); u != it->end(); ++u) {
      int unit = -1;
      if (u.key() == "tensor") unit = static_cast<int>(ComputeUnit::tensor_core);
      if (u.key() == "cuda") unit = static_cast<int>(ComputeUnit::cuda_core);
      if (unit < 0) hardware_fail(origin, "peak_tflops." + it.key() + ": unknown unit '" + u.key() + "' (expected tensor, cuda)");
      if (!u->is_number() || u->get<double>() < 0)
        hardware_fail(origin, "peak_tflops." + it.key() + "." + u.key() + " must be a non-negative number");
      hw.peak_flops[static_cast<int>(*dt)][unit] = u->get<double>() * 1e12;
      any = any || u->get<double>() > 0;
    }
  }
  if (!any) hardware_fail(origin, "peak_tflops gives no positive rate");
  hw.sources = hardware_fields(origin).strings(field(j, "sources", origin), "sources", true);
  return hw;
}

std::string to_hardware_json(const HardwareModel& hw) {
  json j;
  j["format"] = kHardwareFormat;
  j["name"] = hw.name;
  j["display_name"] = hw.display_name;
  j["kind"] = hw.kind;
  if (!hw.provenance.empty()) j["provenance"] = hw.provenance;
  j["sm_count"] = hw.sm_count;
  j["sram_bytes_per_sm"] = hw.sram_bytes_per_sm;
  if (hw.max_smem_per_block_bytes > 0) j["max_smem_per_block_bytes"] = hw.max_smem_per_block_bytes;
  j["l2_bytes"] = hw.l2_bytes;
  if (hw.l2_partitions > 1) j["l2_partitions"] = hw.l2_partitions;
  if (hw.hbm_bytes > 0) j["hbm_bytes"] = hw.hbm_bytes;
  j["hbm_bandwidth_gbs"] = hw.hbm_bandwidth / 1e9;
  if (hw.l2_bandwidth > 0) j["l2_bandwidth_gbs"] = hw.l2_bandwidth / 1e9;
  j["sram_bandwidth_gbs"] = hw.sram_bandwidth / 1e9;
  if (hw.clock_mhz > 0) j["clock_mhz"] = hw.clock_mhz;
  json peaks = json::object();
  for (DType d : {DType::fp16, DType::bf16, DType::fp32}) {
    json units = json::object();
    for (ComputeUnit u : {ComputeUnit::tensor_core, ComputeUnit::cuda_core})
      units[std::string(to_string(u))] = hw.peak(d, u) / 1e12;
    peaks[std::string(to_string(d))] = units;
  }
  j["peak_tflops"] = peaks;
  j["sources"] = hw.sources;
  return j.dump(2) + "\n";
}

i64 l2_partitions_of(int compute_capability) { return compute_capability == 80 || compute_capability == 90 ? 2 : 1; }

i64 shared_l2_bytes(const HardwareModel& hw) { return hw.l2_bytes / std::max<i64>(1, hw.l2_partitions); }

std::vector<std::string> list_presets() { return asset_names("hardware"); }

HardwareModel load_hardware(const std::string& preset_or_path) {
  if (preset_or_path.empty()) throw HardwareError("empty hardware name");
  const std::string path = asset_file<HardwareError>(kPresets, preset_or_path);
  return parse_hardware_json(read_asset<HardwareError>(kPresets, path), path);
}

}  // namespace flashlab::sim
