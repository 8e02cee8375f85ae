#include <cctype>
#include <charconv>

#include "kiln/base/error.h"
#include "kiln/ir/text.h"

namespace kiln {
namespace {

class LineParser {
 public:
  LineParser(std::string_view s, int line) : s_(s), line_(line) {}

  [[noreturn]] void fail(const std::string& what) const {
    KILN_THROW(GraphError) << "[parse] line " << line_ << ", column " << pos_ + 1 << ": " << what << " in: " << s_;
  }
  void skip_ws() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool peek(char c) {
    skip_ws();
    return pos_ < s_.size() && s_[pos_] == c;
  }
  bool accept(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }
  bool accept_word(std::string_view w) {
    skip_ws();
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }
  bool at_end() {
    skip_ws();
    return pos_ == s_.size();
  }
  std::string ident() {
    skip_ws();
    size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (b == pos_) fail("expected a name");
    return std::string(s_.substr(b, pos_ - b));
  }
  std::string quoted() {
    expect('"');
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) ++pos_;
      out += s_[pos_++];
    }
    if (pos_ >= s_.size()) fail("unterminated string");
    ++pos_;
    return out;
  }
  int64_t integer() {
    skip_ws();
    int64_t v = 0;
    auto r = std::from_chars(s_.data() + pos_, s_.data() + s_.size(), v);
    if (r.ec != std::errc()) fail("expected an integer");
    pos_ = r.ptr - s_.data();
    return v;
  }
  ValueId value_ref() {
    expect('%');
    return static_cast<ValueId>(integer());
  }
  std::vector<int64_t> int_list() {
    expect('[');
    std::vector<int64_t> v;
    if (accept(']')) return v;
    do v.push_back(integer());
    while (accept(','));
    expect(']');
    return v;
  }
  Attr attr_value() {
    skip_ws();
    if (peek('"')) return quoted();
    if (peek('[')) return int_list();
    size_t e = pos_;
    while (e < s_.size() && s_[e] != ',' && s_[e] != '}' && s_[e] != ' ') ++e;
    std::string_view tok = s_.substr(pos_, e - pos_);
    if (tok.find_first_of(".eEni") != std::string_view::npos) {
      double d = 0;
      auto r = std::from_chars(tok.data(), tok.data() + tok.size(), d);
      if (r.ec != std::errc() || r.ptr != tok.data() + tok.size()) fail("bad number '" + std::string(tok) + "'");
      pos_ = e;
      return d;
    }
    const int64_t v = integer();
    if (pos_ != e) fail("bad integer '" + std::string(tok) + "'");
    return v;
  }

 private:
  std::string_view s_;
  int line_;
  size_t pos_ = 0;
};

}  // namespace

Graph parse_graph(std::string_view text) {
  Graph g;
  int line_no = 0;
  bool header = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    LineParser p(line, line_no);
    if (!header) {
      if (line != "kiln-graph v1") p.fail("expected the header 'kiln-graph v1'");
      header = true;
      continue;
    }
    if (p.accept_word("output")) {
      std::string name = p.quoted();
      p.expect('=');
      const ValueId v = p.value_ref();
      if (v < 0 || static_cast<size_t>(v) >= g.size()) p.fail("output refers to unknown node %" + std::to_string(v));
      if (!p.at_end()) p.fail("unexpected text after the output");
      g.add_output(name, v);
      continue;
    }
    const ValueId id = p.value_ref();
    if (id != static_cast<ValueId>(g.size())) p.fail("expected node %" + std::to_string(g.size()));
    p.expect('=');
    Node n{};
    const std::string opname = p.ident();
    if (!find_op(opname, &n.op)) p.fail("unknown op '" + opname + "'");
    p.expect('(');
    if (!p.accept(')')) {
      do n.inputs.push_back(p.value_ref());
      while (p.accept(','));
      p.expect(')');
    }
    if (p.accept('{')) {
      do {
        const std::string key = p.ident();
        p.expect('=');
        n.attrs.set(key, p.attr_value());
      } while (p.accept(','));
      p.expect('}');
    }
    p.expect(':');
    const std::string dt = p.ident();
    try {
      n.dtype = parse_dtype(dt);
    } catch (const GraphError&) {
      p.fail("unknown type '" + dt + "'");
    }
    n.shape = p.int_list();
    if (p.peek('"')) n.name = p.quoted();
    if (!p.at_end()) p.fail("unexpected text at the end of the line");
    for (ValueId in : n.inputs)
      if (in < 0 || in >= id) p.fail("input %" + std::to_string(in) + " is not an earlier node");
    g.add_unchecked(std::move(n));
  }
  if (!header) KILN_THROW(GraphError) << "[parse] empty text: expected the header 'kiln-graph v1'";
  verify(g);
  return g;
}

}  // namespace kiln
