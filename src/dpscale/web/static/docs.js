// The interactive API documentation, from the app's own copy of Swagger UI (no CDN).
// No deep links: Swagger draws each one as a link inside the operation's button (a control in a control).
window.addEventListener("DOMContentLoaded", function () {
  "use strict";
  window.SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: false });
});
