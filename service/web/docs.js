/* personal-leaderboard: Swagger UI at "/docs", on the schema at /openapi.json.
 *
 * The initialiser FastAPI's own /docs page puts in an inline <script>, moved here so that
 * the page runs under a Content-Security-Policy with no 'unsafe-inline' script. Swagger UI
 * itself comes from /docs/assets/ (the copy of the package fastapi-offline): nothing is
 * loaded from other origins, and no schema validator is called.
 */
'use strict';

window.ui = SwaggerUIBundle({
  url: '/openapi.json',
  dom_id: '#swagger-ui',
  layout: 'BaseLayout',
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
