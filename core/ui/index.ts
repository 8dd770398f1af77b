export { uiRoutes } from './routes.js';
