#include "flashlab/export/chart_export.hpp"

#include <algorithm>
#include <cctype>
#include <memory>
#include <stdexcept>

#include "canvases.hpp"
#include "flashlab/analysis/text/csv.hpp"

#ifdef FLASHLAB_HAVE_CAIRO
#include <cairo-pdf.h>
#include <cairo.h>
#endif

namespace flashlab::analysis {

namespace {

constexpr int kMaxSide = 16384;  // pixels; beyond this cairo refuses or memory runs out

void check_size(const ExportOptions& o) {
  if (o.width_px < 64 || o.height_px < 64 || o.width_px > kMaxSide || o.height_px > kMaxSide)
    throw std::runtime_error("chart size " + std::to_string(o.width_px) + "×" + std::to_string(o.height_px) +
                             " is out of range (64 to 16384 pixels a side)");
}

ChartStyle style_for(const ExportOptions& o) {
  const double scale = o.scale > 0 ? o.scale : std::clamp(o.width_px / 960.0, 0.75, 4.0);
  ChartStyle st = o.dark ? dark_chart_style(scale) : ChartStyle{};
  st.scale = scale;
  return st;
}

void draw(const ChartSpec& c, Canvas& cv, const ExportOptions& o) {
  const ChartStyle st = style_for(o);
  const Rect outer{0, 0, static_cast<double>(o.width_px), static_cast<double>(o.height_px)};
  const ChartLayout layout = layout_chart(c, cv, outer, st);
  render_chart(c, cv, layout, st);
}

#ifdef FLASHLAB_HAVE_CAIRO
cairo_status_t append(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

void check(cairo_status_t s, const char* what) {
  if (s != CAIRO_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cairo_status_to_string(s));
}
#endif

}  // namespace

std::string_view to_string(ExportFormat f) {
  switch (f) {
    case ExportFormat::svg: return "svg";
    case ExportFormat::png: return "png";
    case ExportFormat::pdf: return "pdf";
    case ExportFormat::csv: return "csv";
  }
  return "?";
}

std::optional<ExportFormat> export_format_of(const std::string& path) {
  const auto dot = path.find_last_of('.');
  if (dot == std::string::npos || path.find('/', dot) != std::string::npos) return std::nullopt;
  std::string ext = path.substr(dot + 1);
  for (char& ch : ext) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (ext == "svg") return ExportFormat::svg;
  if (ext == "png") return ExportFormat::png;
  if (ext == "pdf") return ExportFormat::pdf;
  if (ext == "csv") return ExportFormat::csv;
  return std::nullopt;
}

bool have_cairo() {
#ifdef FLASHLAB_HAVE_CAIRO
  return true;
#else
  return false;
#endif
}

Point measure_text_export(const std::string& s, double size_px) { return detail::measure_dejavu(s, size_px); }

namespace {

// Draws nothing; measures as the exporters' font does.
class MeasuringCanvas : public NullCanvas {
 public:
  Point measure(const std::string& s, double size_px) override { return detail::measure_dejavu(s, size_px); }
};

}  // namespace

std::vector<std::string> chart_layout_problems(const ChartSpec& c, const ExportOptions& o) {
  check_size(o);
  MeasuringCanvas measuring;
  LayoutRecorder drawn(measuring);
  draw(c, drawn, o);
  return layout_problems(drawn, {0, 0, static_cast<double>(o.width_px), static_cast<double>(o.height_px)});
}

std::string render_svg(const ChartSpec& c, const ExportOptions& o) {
  check_size(o);
  detail::SvgCanvas cv(o.width_px, o.height_px);
  draw(c, cv, o);
  return cv.finish();
}

#ifdef FLASHLAB_HAVE_CAIRO
namespace {

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* cr) const { cairo_destroy(cr); }
};
using Surface = std::unique_ptr<cairo_surface_t, SurfaceDeleter>;

// The chart drawn on `s` through a context scaled by `scale`; `page` ends a PDF page.
// Surface and context are released on every path, exceptions included.
void draw_on(cairo_surface_t* s, const ChartSpec& c, const ExportOptions& o, double scale, bool page) {
  const std::unique_ptr<cairo_t, ContextDeleter> cr(cairo_create(s));
  if (scale != 1.0) cairo_scale(cr.get(), scale, scale);
  detail::CairoCanvas cv(cr.get());
  draw(c, cv, o);
  if (page) cairo_show_page(cr.get());
  check(cairo_status(cr.get()), "cairo drawing");
}

}  // namespace
#endif

std::string render_png(const ChartSpec& c, const ExportOptions& o) {
  check_size(o);
#ifdef FLASHLAB_HAVE_CAIRO
  const Surface s(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, o.width_px, o.height_px));
  check(cairo_surface_status(s.get()), "cairo image surface");
  draw_on(s.get(), c, o, 1.0, false);
  cairo_surface_flush(s.get());
  std::string out;
  check(cairo_surface_write_to_png_stream(s.get(), append, &out), "PNG encoding");
  return out;
#else
  (void)c;
  throw std::runtime_error("this build has no cairo: PNG export is unavailable (install libcairo2-dev and rebuild)");
#endif
}

std::string render_pdf(const ChartSpec& c, const ExportOptions& o) {
  check_size(o);
#ifdef FLASHLAB_HAVE_CAIRO
  std::string out;
  {
    // 1 px = 0.75 pt: a 1200 px chart is a 900 pt (12.5 in) wide page.
    const Surface s(cairo_pdf_surface_create_for_stream(append, &out, o.width_px * 0.75, o.height_px * 0.75));
    check(cairo_surface_status(s.get()), "cairo PDF surface");
    cairo_pdf_surface_set_metadata(s.get(), CAIRO_PDF_METADATA_TITLE, c.title.c_str());
    cairo_pdf_surface_set_metadata(s.get(), CAIRO_PDF_METADATA_CREATOR, "FlashLab");
    draw_on(s.get(), c, o, 0.75, true);
    cairo_surface_finish(s.get());
    check(cairo_surface_status(s.get()), "PDF writing");
  }  // the stream writes into `out` until the surface goes
  return out;
#else
  (void)c;
  throw std::runtime_error("this build has no cairo: PDF export is unavailable (install libcairo2-dev and rebuild)");
#endif
}

void export_chart(const ChartSpec& c, const std::string& path, const ExportOptions& o) {
  const auto f = export_format_of(path);
  if (!f) throw std::runtime_error("cannot export to '" + path + "': the extension must be .svg, .png, .pdf or .csv");
  std::string bytes;
  switch (*f) {
    case ExportFormat::svg: bytes = render_svg(c, o); break;
    case ExportFormat::png: bytes = render_png(c, o); break;
    case ExportFormat::pdf: bytes = render_pdf(c, o); break;
    case ExportFormat::csv: bytes = chart_to_csv(c); break;
  }
  write_file_atomic(path, bytes);
}

}  // namespace flashlab::analysis
