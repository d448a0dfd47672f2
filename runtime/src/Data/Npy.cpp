//===- Npy.cpp - NumPy .npy files
//------------------------------------------===//

#include "runtime/src/Data/Npy.h"

#include <cctype>
#include <cstring>
#include <limits>

using namespace dtcrt;

int64_t NpyArray::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string dtcrt::shapeString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1)
    s += ",";
  return s + ")";
}

namespace {
/// The header of a .npy file: a Python dict literal with the keys 'descr',
/// 'fortran_order' and 'shape', parsed without recursion.
class HeaderParser {
public:
  explicit HeaderParser(const std::string &text) : text(text) {}

  bool parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape,
             std::string &error);

private:
  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }
  bool consume(char c) {
    skipSpace();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  }
  bool parseString(std::string &out);
  bool parseWord(std::string &out);
  bool parseInt(int64_t &out);

  const std::string &text;
  size_t pos = 0;
};
} // namespace

bool HeaderParser::parseString(std::string &out) {
  skipSpace();
  if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
    return false;
  char quote = text[pos++];
  size_t end = text.find(quote, pos);
  if (end == std::string::npos)
    return false;
  out = text.substr(pos, end - pos);
  pos = end + 1;
  return true;
}

bool HeaderParser::parseWord(std::string &out) {
  skipSpace();
  size_t start = pos;
  while (pos < text.size() &&
         std::isalpha(static_cast<unsigned char>(text[pos])))
    ++pos;
  out = text.substr(start, pos - start);
  return !out.empty();
}

bool HeaderParser::parseInt(int64_t &out) {
  skipSpace();
  size_t start = pos;
  out = 0;
  while (pos < text.size() &&
         std::isdigit(static_cast<unsigned char>(text[pos]))) {
    int digit = text[pos] - '0';
    if (out > (std::numeric_limits<int64_t>::max() - digit) / 10)
      return false;
    out = out * 10 + digit;
    ++pos;
  }
  // Python 2 wrote long dimensions as "3L".
  if (pos > start && pos < text.size() && text[pos] == 'L')
    ++pos;
  return pos > start;
}

bool HeaderParser::parse(std::string &descr, bool &fortran,
                         std::vector<int64_t> &shape, std::string &error) {
  bool haveDescr = false, haveFortran = false, haveShape = false;
  if (!consume('{')) {
    error = "its header is not a dictionary";
    return false;
  }
  while (!consume('}')) {
    std::string key;
    if (!parseString(key) || !consume(':')) {
      error = "its header is malformed";
      return false;
    }
    if (key == "descr") {
      if (!parseString(descr)) {
        error = "its dtype is not a simple type (structured arrays are not "
                "data inputs)";
        return false;
      }
      haveDescr = true;
    } else if (key == "fortran_order") {
      std::string word;
      if (!parseWord(word) || (word != "True" && word != "False")) {
        error = "its header has a malformed 'fortran_order'";
        return false;
      }
      fortran = word == "True";
      haveFortran = true;
    } else if (key == "shape") {
      if (!consume('(')) {
        error = "its header has a malformed 'shape'";
        return false;
      }
      shape.clear();
      while (!consume(')')) {
        int64_t d;
        if (!parseInt(d)) {
          error = "its header has a malformed 'shape'";
          return false;
        }
        shape.push_back(d);
        if (!consume(',')) {
          if (!consume(')')) {
            error = "its header has a malformed 'shape'";
            return false;
          }
          break;
        }
      }
      haveShape = true;
    } else {
      error = "its header has the unknown key '" + key + "'";
      return false;
    }
    if (!consume(',')) {
      if (!consume('}')) {
        error = "its header is malformed";
        return false;
      }
      break;
    }
  }
  if (!haveDescr || !haveFortran || !haveShape) {
    error = "its header lacks 'descr', 'fortran_order' or 'shape'";
    return false;
  }
  return true;
}

static uint32_t readLE(const uint8_t *p, int bytes) {
  uint32_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}

bool dtcrt::parseNpy(const uint8_t *image, size_t size, const std::string &what,
                     NpyArray &out, std::string &error) {
  static const char kMagic[] = "\x93NUMPY";
  if (size < 10 || std::memcmp(image, kMagic, 6) != 0) {
    error = "'" + what + "' is not a .npy file";
    return false;
  }
  int major = image[6];
  size_t headerLen, offset;
  if (major == 1) {
    headerLen = readLE(image + 8, 2);
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) {
      error = "'" + what + "' is truncated";
      return false;
    }
    headerLen = readLE(image + 8, 4);
    offset = 12;
  } else {
    error = "'" + what + "' has .npy format version " + std::to_string(major) +
            ", which is not 1, 2 or 3";
    return false;
  }
  if (headerLen > size - offset) {
    error = "'" + what + "' is truncated (its header runs past the end)";
    return false;
  }
  std::string header(reinterpret_cast<const char *>(image + offset), headerLen);
  std::string descr, why;
  bool fortran = false;
  std::vector<int64_t> shape;
  if (!HeaderParser(header).parse(descr, fortran, shape, why)) {
    error = "'" + what + "' is not a valid .npy file: " + why;
    return false;
  }
  bool bigEndian = false;
  std::optional<DType> dtype = parseNpyDescr(descr, bigEndian);
  if (!dtype) {
    error = "'" + what + "' holds dtype '" + descr +
            "', which is not bool, an integer or float16/32/64";
    return false;
  }
  if (fortran) {
    error = "'" + what +
            "' is in Fortran order; save it in C order "
            "(numpy.ascontiguousarray)";
    return false;
  }
  size_t elementSize = dtypeSize(*dtype);
  uint64_t count = 1;
  for (int64_t d : shape) {
    if (d != 0 && count > uint64_t(std::numeric_limits<int64_t>::max()) /
                              elementSize / uint64_t(d)) {
      error = "'" + what + "' declares a shape too large to address";
      return false;
    }
    count *= uint64_t(d);
  }
  uint64_t need = count * elementSize;
  size_t payload = size - offset - headerLen;
  if (payload != need) {
    error = "'" + what + "' holds " + std::to_string(payload) +
            " data bytes where its shape " + shapeString(shape) + " of " +
            dtypeNumpyName(*dtype) + " needs " + std::to_string(need) +
            (payload < need ? " (truncated)" : "");
    return false;
  }
  out.dtype = *dtype;
  out.shape = std::move(shape);
  out.bytes = size_t(need);
  out.data = image + offset + headerLen;
  out.swapped.clear();
  if (bigEndian) {
    out.swapped.assign(out.data, out.data + out.bytes);
    for (size_t i = 0; i < out.bytes; i += elementSize)
      for (size_t a = i, b = i + elementSize - 1; a < b; ++a, --b)
        std::swap(out.swapped[a], out.swapped[b]);
    out.data = out.swapped.data();
  }
  return true;
}

bool dtcrt::readNpy(const std::string &path, NpyArray &out,
                    std::string &error) {
  MappedFile file;
  if (!file.open(path, error))
    return false;
  if (!parseNpy(file.data(), file.size(), path, out, error))
    return false;
  out.file = std::move(file);
  return true;
}

std::string dtcrt::npyHeader(DType dtype, const std::vector<int64_t> &shape) {
  std::string header =
      "{'descr': '" + npyDescr(dtype) +
      "', 'fortran_order': False, 'shape': " + shapeString(shape) + ", }";
  // Pad so the data starts on a 64-byte boundary, as NumPy does.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  // The header length fits in two bytes for every shape of rank <= 64.
  std::string image = "\x93NUMPY";
  image += char(1);
  image += char(0);
  image += char(header.size() & 0xff);
  image += char(header.size() >> 8);
  return image + header;
}

std::string dtcrt::encodeNpy(DType dtype, const std::vector<int64_t> &shape,
                             const void *bytes, size_t size) {
  std::string image = npyHeader(dtype, shape);
  image.append(static_cast<const char *>(bytes), size);
  return image;
}

bool dtcrt::writeNpyFile(const std::string &path, DType dtype,
                         const std::vector<int64_t> &shape, const void *bytes,
                         size_t size, std::string &error) {
  std::string header = npyHeader(dtype, shape);
  return writeFileDurably(path, {{header.data(), header.size()}, {bytes, size}},
                          error);
}
