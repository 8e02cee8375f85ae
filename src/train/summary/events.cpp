#include "train/summary/events.h"

#include <cstdint>

#include <utility>
#include <vector>

#include "tf_event.pb.h"

namespace kiln {
namespace {

using Scalars = std::vector<std::pair<std::string, float>>;

void add(Scalars& out, const std::string& tag, const nlohmann::json& v) {
  if (v.is_number()) out.emplace_back(tag, v.get<float>());
  else if (v.is_boolean()) out.emplace_back(tag, v.get<bool>() ? 1.f : 0.f);
}

void add_all(Scalars& out, const nlohmann::json& map) {
  if (!map.is_object()) return;
  for (const auto& [k, v] : map.items()) add(out, k, v);
}

double number(const nlohmann::json& o, const char* key) {
  return o.contains(key) && o[key].is_number() ? o[key].get<double>() : 0.0;
}

std::string base64_decode(const std::string& in) {
  static const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (const char c : in) {
    const size_t v = alphabet.find(c);
    if (v == std::string::npos) continue;  // '=' padding and line breaks
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

// A record's histograms and images, as Summary values.
void add_values(tensorflow::Summary& s, const nlohmann::json& r) {
  const auto& hs = r.value("histograms", nlohmann::json());
  if (hs.is_object())
    for (const auto& [tag, h] : hs.items()) {
      if (!h.is_object()) continue;
      tensorflow::HistogramProto* p = s.add_value()->mutable_histo();
      s.mutable_value(s.value_size() - 1)->set_tag(tag);
      p->set_min(number(h, "min"));
      p->set_max(number(h, "max"));
      p->set_num(number(h, "num"));
      p->set_sum(number(h, "sum"));
      p->set_sum_squares(number(h, "sum_squares"));
      const auto& limits = h.value("bucket_limit", nlohmann::json());
      const auto& counts = h.value("bucket", nlohmann::json());
      if (limits.is_array() && counts.is_array() && limits.size() == counts.size())
        for (size_t i = 0; i < limits.size(); ++i)
          if (limits[i].is_number() && counts[i].is_number()) {
            p->add_bucket_limit(limits[i].get<double>());
            p->add_bucket(counts[i].get<double>());
          }
    }
  const auto& is = r.value("images", nlohmann::json());
  if (is.is_object())
    for (const auto& [tag, im] : is.items()) {
      if (!im.is_object() || !im.contains("png") || !im["png"].is_string()) continue;
      tensorflow::Summary::Value* v = s.add_value();
      v->set_tag(tag);
      tensorflow::Summary::Image* p = v->mutable_image();
      p->set_height(static_cast<int>(number(im, "height")));
      p->set_width(static_cast<int>(number(im, "width")));
      p->set_colorspace(static_cast<int>(number(im, "colorspace")));
      p->set_encoded_image_string(base64_decode(im["png"].get<std::string>()));
    }
}

}  // namespace

std::string summary_bytes(const std::vector<std::pair<std::string, float>>& scalars, const nlohmann::json& values) {
  tensorflow::Summary s;
  for (const auto& [tag, v] : scalars) {
    tensorflow::Summary::Value* x = s.add_value();
    x->set_tag(tag);
    x->set_simple_value(v);
  }
  add_values(s, values);
  return s.SerializeAsString();
}

void SummaryEvents::on_record(const nlohmann::json& r) {
  const std::string event = r.value("event", "");
  if (!r.contains("step") || !r["step"].is_number_integer()) return;
  const int64_t step = r["step"].get<int64_t>();
  const double wall = r.contains("wall_time") && r["wall_time"].is_number() ? r["wall_time"].get<double>() : 0.0;
  if (!file_) file_ = std::make_unique<EventFile>(dir_);
  Scalars s;
  if (event == "start") {
    const auto& cfg = r.value("config", nlohmann::json::object());
    accelerate_ = cfg.is_object() && cfg.contains("accelerate_train_mode") && cfg["accelerate_train_mode"].is_string() &&
                  !cfg["accelerate_train_mode"].get<std::string>().empty();
    file_->session_start(step + 1, wall);
  } else if (event == "progress") {
    add(s, "loss", r.value("loss", nlohmann::json()));
    add(s, "global_step/sec", r.value("steps_per_second", nlohmann::json()));
    add(s, "learning_rate", r.value("learning_rate", nlohmann::json()));
    add(s, "kiln/loss_scale", r.value("loss_scale", nlohmann::json()));
    if (accelerate_ && r.contains("phase") && r["phase"].is_string())
      s.emplace_back("kiln/low_precision", r["phase"].get<std::string>() == "original" ? 0.f : 1.f);
    add_all(s, r.value("scalars", nlohmann::json()));
  } else if (event == "scalars") {
    add_all(s, r.value("scalars", nlohmann::json()));
  } else if (event == "precision_switch") {
    s.emplace_back("kiln/precision_switch_step", static_cast<float>(step));
  } else if (event == "eval") {
    add_all(s, r.value("metrics", nlohmann::json()));
  } else if (event == "end") {
    const auto& a = r.value("accelerate", nlohmann::json());
    if (a.is_object()) add(s, "kiln/skipped_updates", a.value("skipped_updates", nlohmann::json()));
  }
  file_->scalars(step, wall, s);
  if (event == "progress" || event == "scalars") {
    tensorflow::Summary values;
    add_values(values, r);
    file_->summary(step, wall, values);
  }
}

}  // namespace kiln
