/** Text made safe inside an SVG element or attribute: the reproductions' plots print labels with `&` and `<`. */
export function escapeXml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}
