// The interactive API documentation, from the app's own copy of Swagger UI (no CDN).
window.addEventListener("DOMContentLoaded", function () {
  "use strict";
  window.SwaggerUIBundle({ url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true });
});
